"""Cluster layouts: the one place that knows where a task learns its cluster and its place in it.

* :mod:`.spec` — cluster specifications from every source (``--cluster FILE``,
  ``--tf-config``, the ``TF_CONFIG`` variable, Slurm), read into a
  :class:`~.spec.ConfigDocument` and, once judged sound, a :class:`~.spec.ClusterSpec`;
  addresses (:func:`~.spec.parse_address`) and task names (:class:`~.spec.TaskRef`);
* :mod:`.scheduler` — the scheduler contract: what a scheduler tells a task (detect itself, the
  task's identity, the layout and ports, log prefixes, exit semantics, where it shows the outcome);
  :mod:`.schedulers` — the one registry of the modules that implement it, in detection order:
* :mod:`.openmpi` — ``mpirun``'s ranks (``OMPI_COMM_WORLD_*``), every rank ``worker:RANK``;
* :mod:`.slurm` — the cluster TensorFlow's ``SlurmClusterResolver`` builds from ``SLURM_*``;
* :mod:`.tfjob` — a Kubeflow TFJob pod's environment (its pod name against its TF_CONFIG);
* :mod:`.local` — ``distdoctor run``'s own launcher: every task on this machine, its ports and TF_CONFIG;
* :mod:`.tfconfig` — a hand-written TF_CONFIG, and task names.

``check`` (:mod:`distdoctor.preflight`) and ``run``/``run --node``
(:mod:`distdoctor.supervise`) read clusters only through this package. Everything
here is a pure function of the text or environment mapping it is given, except
:func:`.local.pick_free_ports` and the file readers.
"""
