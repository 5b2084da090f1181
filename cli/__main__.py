"""``python -m vizgrad_cli`` is the ``vizgrad`` command."""

from .main import main

if __name__ == "__main__":
    main()
