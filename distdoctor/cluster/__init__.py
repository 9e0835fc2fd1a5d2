"""Cluster layouts: the one place that knows where a task learns its cluster and its place in it.

* :mod:`.spec` — cluster specifications from every source (``--cluster FILE``,
  ``--tf-config``, the ``TF_CONFIG`` variable, Slurm), read into a
  :class:`~.spec.ConfigDocument` and, once judged sound, a :class:`~.spec.ClusterSpec`;
  addresses (:func:`~.spec.parse_address`) and task names (:class:`~.spec.TaskRef`);
* :mod:`.slurm` — the cluster TensorFlow's ``SlurmClusterResolver`` builds from ``SLURM_*``;
* :mod:`.tfjob` — a Kubeflow TFJob pod's environment (its pod name against its TF_CONFIG);
* :mod:`.tfconfig` — the TF_CONFIG of every task of a cluster ``distdoctor run`` launches itself.

``check`` (:mod:`distdoctor.preflight`) and ``run``/``run --node``
(:mod:`distdoctor.supervise`) read clusters only through this package. Everything
here is a pure function of the text or environment mapping it is given, except
:func:`.tfconfig.pick_free_ports` and the file readers.
"""
