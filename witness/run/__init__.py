"""The run machinery: how files get through the engines, apart from what is done to them.

- ``orchestrate``: hosting a run (the ``Orchestrator``: plan, jobs, decoding, workers, the
  transcript assembled); ``placement``: each engine's device and the plan; ``plan``: parallel
  or serial and the threads; ``jobs``: the settings translated into typed worker jobs, models
  resolved first; ``engines``: what each worker builds and runs.
- ``flow``: files through the workers as a pipeline; ``workers`` and ``shm``: the worker
  processes and the decoded audio they share; ``stop``: Ctrl-C and SIGTERM.
- ``batch`` and ``manifest``: many calls into a folder, resumable; ``ray_pool``: the engines
  on a Ray cluster.

The data path itself (audio, vad, channels, merge, assemble, transcript, writers, quote) is
the top level of ``witness``; the Python API (``witness.api``) is the one way in.
"""
