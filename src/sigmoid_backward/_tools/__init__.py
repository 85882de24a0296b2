"""What the command lines and ``show_config()`` share.

The program's name and one-line usage errors (``_cli.py``), path checks
before anything is opened (``_paths.py``) and ``show_config()``
(``_show_config.py``).  The bench's timing tools are the public
``sigmoid_backward.bench`` subpackage.
"""
