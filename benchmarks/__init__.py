"""The bundled sample suites, one folder per family (written for this project in the
upstream formats, not upstream data).

Installed as the package ``pytest_specbench.suites`` (``package-dir`` in
``pyproject.toml``), so a wheel carries them; code finds a family's folder with
:func:`pytest_specbench.data.bundled.bundled_suite`, never by a path relative to a
source file.
"""
