# The sandbox image's recipe, sourced by scripts/build-image.sh (build from the locks) and
# scripts/lock-image.sh (refresh the locks). What is pinned lives in debian.lock and wheels.lock; what
# the image offers is python-top40.json; this file says how the two are put together.
#
# Base: Debian trixie's own python3 (CPython 3.13) from debootstrap, so the same build works from any
# Debian mirror, including a local one on an air-gapped machine, and gets Debian's security fixes.
# Packages: manylinux wheels from PyPI (or a local wheelhouse), each checked against its sha256 in
# wheels.lock, installed with --no-deps --only-binary :all: (no sdist, so nothing runs at build time).

SUITE=trixie
ARCH=amd64
# Python's platform tag for the wheels of $ARCH.
WHEEL_ARCH=x86_64
# What the base holds beside debootstrap's minbase: Python, the C++ runtime manylinux wheels link
# against, CA certificates (ssl), DejaVu fonts (Pillow's and wordcloud's text, by path or name) and
# the time zone database (zoneinfo).
INCLUDE=python3,libstdc++6,ca-certificates,fonts-dejavu-core,tzdata

# Deleted from the installed wheels. Test suites and the headers and Cython sources of compiled
# packages are never imported by the code that runs here (type stubs stay: scikit-image and others
# read their .pyi files at import time, through lazy_loader). pyarrow's network file systems and
# RPC (S3, GCS, Azure, HDFS, Flight) cannot work in a sandbox without a network and are a third of
# pyarrow's size: `import pyarrow.fs` still works (it lists them as not built), `import pyarrow.flight`
# says it is not available. Plotly's
# JupyterLab extension and widget bundle serve Jupyter front ends, which the sandbox has none of
# (plotly.min.js, for offline HTML, stays).
PRUNE_DIRS=(tests)
PRUNE_GLOBS=('*.pyx' '*.pxd' '*.pxi' '*.h' '*.hpp')
PRUNE_PATHS=(
  pyarrow/include pyarrow/src joblib/test nltk/test 'statsmodels/datasets/*/src'
  'pyarrow/libarrow_flight.so*' 'pyarrow/libarrow_python_flight.so*' 'pyarrow/_flight.cpython-*.so'
  'pyarrow/libarrow_s3.so*' 'pyarrow/_s3fs.cpython-*.so' 'pyarrow/_gcsfs.cpython-*.so'
  'pyarrow/_azurefs.cpython-*.so' 'pyarrow/_hdfs.cpython-*.so' 'pyarrow/_pyarrow_cpp_tests.cpython-*.so'
  plotly/labextension plotly/package_data/widgetbundle.js ../../../share/jupyter
)

# Deleted from the Debian base: documentation, translations, package caches and apt itself (the image
# is extended by changing this recipe, never by apt inside it). dpkg's database stays, so scanners
# (trivy, grype, syft) still see every Debian package and its version.
DELETE=(usr/share/doc usr/share/man usr/share/info usr/share/lintian usr/share/bash-completion
        var/cache/apt var/lib/apt/lists var/cache/debconf/templates.dat-old var/log)
PURGE=(apt libapt-pkg7.0 sqv)

# Where the image says what it holds (read by runtime.packages() and the ModuleNotFoundError hint).
MANIFEST=/usr/share/mcp-code-exec/packages.json
# Where matplotlib's font cache is pre-built (entrypoint/display.py copies it to MPLCONFIGDIR).
MPLCONFIG=/opt/mplconfig
