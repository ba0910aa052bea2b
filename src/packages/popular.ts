/**
 * Distributions many people install: a name one edit away from one of these is flagged in the approval
 * question (typosquats live there), and a name that is not on the source is answered with the nearest
 * of these (or of the source's own names, for a wheelhouse). Written by hand from PyPI's most
 * downloaded projects and the data-science stack; with the import table's distributions added.
 */
import { IMPORT_TO_DISTRIBUTION } from "./import-names.ts";

const LISTED = `
boto3 botocore urllib3 requests setuptools certifi idna charset-normalizer typing-extensions python-dateutil
packaging s3transfer aiobotocore six numpy pyyaml fsspec s3fs pip cryptography pydantic pydantic-core
cffi pycparser attrs protobuf jmespath rsa pyasn1 google-api-core googleapis-common-protos wheel
importlib-metadata zipp platformdirs pandas click markupsafe jinja2 filelock virtualenv pytz tzdata
grpcio grpcio-status pyjwt oauthlib requests-oauthlib cachetools google-auth pyarrow awscli colorama
wrapt pluggy pytest iniconfig exceptiongroup tomli anyio sniffio h11 httpcore httpx aiohttp yarl
multidict frozenlist aiosignal async-timeout psutil sqlalchemy greenlet werkzeug flask itsdangerous
blinker decorator docutils pygments rich markdown-it-py mdurl tqdm scipy matplotlib pillow kiwisolver
cycler fonttools contourpy pyparsing scikit-learn joblib threadpoolctl lxml beautifulsoup4 soupsieve
openpyxl et-xmlfile xlrd xlsxwriter tabulate regex tokenizers transformers huggingface-hub safetensors
torch torchvision torchaudio tensorflow keras tensorboard jax jaxlib numba llvmlite networkx sympy mpmath
seaborn statsmodels patsy plotly bokeh altair folium branca dash streamlit gradio nltk spacy gensim
textblob wordcloud opencv-python opencv-python-headless scikit-image imageio tifffile pywavelets xarray
dask distributed cloudpickle toolz partd locket fastapi starlette uvicorn gunicorn websockets
websocket-client python-dotenv python-multipart pyopenssl paramiko bcrypt pynacl docker kubernetes
google-cloud-storage google-cloud-core google-resumable-media google-crc32c azure-core azure-storage-blob
msal isodate more-itertools tenacity retry backoff simplejson ujson orjson msgpack toml tomlkit
ruamel-yaml jsonschema jsonschema-specifications referencing rpds-py marshmallow arrow pendulum
humanize babel faker xmltodict defusedxml html5lib chardet python-docx python-pptx pypdf pypdf2
pdfminer-six pdfplumber pymupdf reportlab fpdf2 qrcode pyzmq tornado ipython ipykernel jupyter
jupyterlab notebook nbformat nbconvert traitlets prompt-toolkit wcwidth pexpect ptyprocess parso jedi
asttokens executing stack-data pure-eval matplotlib-inline debugpy comm nest-asyncio sortedcontainers
pyodbc psycopg2 psycopg2-binary psycopg pymysql mysqlclient redis pymongo elasticsearch sqlparse
alembic mako celery kombu amqp vine billiard openai anthropic tiktoken langchain langchain-core
sentence-transformers faiss-cpu xgboost lightgbm catboost polars duckdb fastparquet h5py tables
netcdf4 shapely pyproj geopandas fiona rasterio gdal biopython rdkit prophet pmdarima cvxpy pulp
ortools pyomo librosa soundfile pydub moviepy imageio-ffmpeg speechrecognition pytesseract emoji
unidecode rapidfuzz levenshtein python-levenshtein fuzzywuzzy langdetect typer termcolor prettytable
dill multiprocess pyperclip pygame boto s3cmd gitpython pygithub python-gitlab dnspython python-slugify
python-jose passlib argon2-cffi pycryptodome pycryptodomex setuptools-scm hatchling flit-core poetry-core
black isort flake8 mypy ruff pylint coverage pytest-cov tox nox mock responses freezegun hypothesis
`;

/** Normalized names (PEP 503) of popular distributions. */
export const POPULAR: ReadonlySet<string> = new Set(
  [...LISTED.split(/\s+/), ...Object.values(IMPORT_TO_DISTRIBUTION)].filter(Boolean).map((n) => n.toLowerCase().replace(/[-_.]+/g, "-")),
);
