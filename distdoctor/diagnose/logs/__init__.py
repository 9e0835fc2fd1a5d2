"""Reading logs we did not write: formats, demultiplexing, the signature knowledge base, and reasoning.

* :mod:`.signature` -- a :class:`Signature` is one rule unit: code, category,
  pattern, role (cause, symptom, wait, context, benign), remedy and a fixture;
* :mod:`.kb` -- the knowledge base: every signature, by source family;
* :mod:`.demux` -- which task wrote a line (file names, prefixes such as
  ``[1,0]<stderr>:``, ``0: ``, ``[pod/x-worker-1/tf]``, content such as
  ``/job:worker/replica:0/task:1``);
* :mod:`.scan` -- the fast path over bytes: a literal prefilter finds candidate
  lines, full patterns run only on those;
* :mod:`.reason` -- the expert's reasoning over what matched: first cause over
  cascade symptoms, hangs only on positive evidence of waiting, confidence and
  ranked alternatives.
"""
