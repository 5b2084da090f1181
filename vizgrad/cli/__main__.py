"""``python -m vizgrad.cli`` is the ``vizgrad`` command, as ``python -m vizgrad`` is."""

from .main import main

if __name__ == "__main__":
    main()
