"""``python -m nolo.cli``: the ``nolo`` command."""

from nolo.cli import main

if __name__ == "__main__":
    main()
