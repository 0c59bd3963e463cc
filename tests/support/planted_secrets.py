"""A folder of the files users leave secrets in, with secrets of many kinds planted in them.

Every secret is made at test time, format-valid and random (so no scanner of this repository finds a
live-looking key in it, and no test can pass by knowing a value): AWS key pairs, source-hosting,
chat, payment and AI keys, private keys, JWTs, Kubernetes ``Secret`` data, passwords a person chose
in URLs, code, ``.env`` and INI files, in Markdown, YAML, JSON, Python, ``.env``-like shell lines, INI, CSV
and a notebook. :data:`PROSE` sits beside them: text about secrets that holds none.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

from documents import make_notebook

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BASE64 = ALNUM + "+/"
#: The characters Django's ``get_random_secret_key`` draws from.
DJANGO = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"


@dataclass(frozen=True)
class Planted:
    """One secret: its kind, the file it is in, a word a user would search it by (its key's name),
    and its value as the file holds it."""

    kind: str
    path: str
    name: str
    value: str

    def pieces(self) -> list[str]:
        """The value as stored text could hold it: whole, and a private key line by line."""
        return [piece for piece in self.value.replace("\\n", "\n").split("\n") if len(piece) >= 6]


class Secrets:
    """Random secrets of each kind, from one seed."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def text(self, alphabet: str, length: int) -> str:
        return "".join(self.random.choice(alphabet) for _ in range(length))

    def aws_key_id(self) -> str:
        return "AKIA" + self.text(string.ascii_uppercase + "234567", 16)

    def aws_secret(self) -> str:
        while True:  # as AWS makes them: capitals, small letters and digits or symbols
            value = self.text(BASE64, 40)
            if (
                any(c.islower() for c in value)
                and any(c.isupper() for c in value)
                and any(c.isdigit() for c in value)
            ):
                return value

    def password(self) -> str:
        """A password a person chose: a capitalised word, digits, a symbol."""
        word = self.random.choice(["Winter", "Harbor", "Maple", "Copper", "Falcon", "Orchid"])
        return (
            word
            + self.text(string.digits, 4)
            + self.random.choice("!#%&*?")
            + self.text(string.ascii_lowercase, 2)
        )

    def pem_body(self) -> list[str]:
        return [self.text(BASE64, 64) for _ in range(5)] + [self.text(BASE64, 28) + "=="]


def planted_secrets(seed: int = 35) -> list[Planted]:
    """The secrets planted by :func:`write_planted_folder`, each kind once or more."""
    s = Secrets(seed)
    pem = s.pem_body()
    return [
        Planted("aws-access-key", "deploy-notes.md", "AWS access key", s.aws_key_id()),
        Planted("aws-secret-key", "deploy-notes.md", "Secret access key", s.aws_secret()),
        Planted("github-token", "deploy-notes.md", "GITHUB_TOKEN", "ghp_" + s.text(ALNUM, 36)),
        Planted("url-password", "deploy-notes.md", "postgres admin", s.password()),
        Planted(
            "huggingface-token",
            "deploy-notes.md",
            "Hugging Face token",
            "hf_" + s.text(string.ascii_letters, 34),
        ),
        Planted(
            "basic-auth",
            "deploy-notes.md",
            "Authorization Basic",
            base64.b64encode(f"deploy:{s.password()}".encode()).decode(),
        ),
        Planted("private-key", "deploy-notes.md", "RSA PRIVATE KEY", "\n".join(pem)),
        Planted(
            "jwt",
            "README.md",
            "Bearer",
            "eyJhbGciOiJIUzI1NiJ9.eyJ" + s.text(ALNUM, 40) + "." + s.text(ALNUM + "_-", 43),
        ),
        Planted("npm-token", "README.md", "_authToken", "npm_" + s.text(ALNUM, 36)),
        Planted(
            "telegram-token",
            "README.md",
            "telegram bot",
            s.text(string.digits, 10) + ":AA" + s.text(ALNUM + "_-", 33),
        ),
        Planted(
            "kubernetes-secret", "secret.yaml", "password", base64.b64encode(s.password().encode()).decode()
        ),
        Planted(
            "kubernetes-secret",
            "secret.yaml",
            "api-token",
            base64.b64encode(s.text(HEX, 32).encode()).decode(),
        ),
        Planted("kubernetes-secret", "secret.yaml", "DATABASE_URL", s.password()),
        Planted("assigned-secret", "docker-compose.yml", "POSTGRES_PASSWORD", s.password()),
        Planted("gitlab-token", "ci.yml", "gitlab_token", "glpat-" + s.text(ALNUM + "_-", 20)),
        Planted(
            "slack-webhook",
            "ci.yml",
            "slack webhook",
            f"T{s.text(ALNUM, 10)}/B{s.text(ALNUM, 10)}/{s.text(ALNUM, 24)}",
        ),
        Planted("assigned-secret", "config.json", "api_key", s.text(HEX, 32)),
        Planted("assigned-secret", "config.json", "password", s.password()),
        Planted("stripe-key", "config.json", "stripe_secret", "sk_live_" + s.text(ALNUM, 24)),
        Planted("private-key", "service-account.json", "private_key", "\\n".join(s.pem_body())),
        Planted("assigned-secret", "service-account.json", "private_key_id", s.text(HEX, 40)),
        Planted("assigned-secret", "settings.py", "SECRET_KEY", "django-insecure-" + s.text(DJANGO, 50)),
        Planted("assigned-secret", "settings.py", "EMAIL_HOST_PASSWORD", s.password()),
        Planted("openai-key", "settings.py", "OPENAI_API_KEY", "sk-proj-" + s.text(ALNUM + "_-", 64)),
        Planted("assigned-secret", "settings.py", "signing_key", s.text(ALNUM, 32)),
        Planted(
            "slack-token",
            "settings.py",
            "SLACK_BOT_TOKEN",
            f"xoxb-{s.text(string.digits, 12)}-{s.text(ALNUM, 24)}",
        ),
        Planted("stripe-key", "setup-env.sh", "STRIPE_SECRET_KEY", "sk_test_" + s.text(ALNUM, 24)),
        Planted(
            "sendgrid-key",
            "setup-env.sh",
            "SENDGRID_API_KEY",
            f"SG.{s.text(ALNUM, 22)}.{s.text(ALNUM + '_-', 43)}",
        ),
        Planted("assigned-secret", "setup-env.sh", "DB_PASS", s.password()),
        Planted(
            "assigned-secret",
            "setup-env.sh",
            "ENCRYPTION_KEY",
            base64.b64encode(s.random.randbytes(32)).decode(),
        ),
        Planted(
            "anthropic-key",
            "config.ini",
            "anthropic api_key",
            "sk-ant-api03-" + s.text(ALNUM + "_-", 93) + "AA",
        ),
        Planted("assigned-secret", "config.ini", "smtp password", s.password()),
        Planted(
            "azure-storage-key",
            "config.ini",
            "AccountKey",
            base64.b64encode(s.random.randbytes(64)).decode(),
        ),
        Planted("aws-access-key", "ci-bot_accessKeys.csv", "Access key ID", s.aws_key_id()),
        Planted("aws-secret-key", "ci-bot_accessKeys.csv", "Secret access key", s.aws_secret()),
        Planted("openai-key", "analysis.ipynb", "openai.api_key", "sk-proj-" + s.text(ALNUM + "_-", 56)),
        Planted("google-api-key", "analysis.ipynb", "GOOGLE_MAPS_KEY", "AIza" + s.text(ALNUM + "_-", 35)),
        Planted("assigned-secret", "analysis.ipynb", "HF_TOKEN", s.text(ALNUM, 40)),
    ]


#: Prose and code about secrets that holds none: stored as written.
PROSE = """# Rotating credentials

The token is valid for one hour; pass the password to the login form, never in a URL.
Secret: keep API keys out of the repository, and rotate each access key every 90 days.
Password: at least 12 characters.

    password = os.environ["DB_PASSWORD"]
    token = client.fetch_token(scope="read")
    tokenizer_path = "models/bert-base-v2"
    max_tokens = 4096
    api_key: <your-api-key>
    password_min_length: 12
    token_type: bearer
    postgres://user:password@localhost/app
    POSTGRES_PASSWORD: mysecretpassword
    OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx
    public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGmKp2Vq0xQ0Vw3m1Yh2cJ7k9L3fN8rT6bD4sE5aW1uZ
"""


def write_planted_folder(folder: Path, planted: list[Planted]) -> Path:
    """The files of :func:`planted_secrets`, each secret written where its ``path`` says."""
    v = {(p.path, p.name): p.value for p in planted}
    files = {
        "deploy-notes.md": (
            "# Deploy notes\n\n"
            "The staging bucket's keys, from the console:\n\n"
            "| Access key ID | Secret access key |\n|---|---|\n"
            f"| {v['deploy-notes.md', 'AWS access key']} | {v['deploy-notes.md', 'Secret access key']} |\n\n"
            f"CI pushes with my token {v['deploy-notes.md', 'GITHUB_TOKEN']} until the bot exists.\n\n"
            f"The database: `postgres://admin:{v['deploy-notes.md', 'postgres admin']}@db.internal/app`.\n\n"
            f"## Models ({v['deploy-notes.md', 'Hugging Face token']})\n\n"
            "The proxy takes\n\n"
            f"    Authorization: Basic {v['deploy-notes.md', 'Authorization Basic']}\n\n"
            "Pasted from the old server:\n\n-----BEGIN RSA PRIVATE KEY-----\n"
            + v["deploy-notes.md", "RSA PRIVATE KEY"]
            + "\n-----END RSA PRIVATE KEY-----\n\nAfter the key: restart nginx.\n"
        ),
        "README.md": (
            "# Billing\n\nCall the API with\n\n"
            f"    curl -H 'Authorization: Bearer {v['README.md', 'Bearer']}' https://billing.internal/v1\n\n"
            f"Publish with `//registry.npmjs.org/:_authToken={v['README.md', '_authToken']}`.\n\n"
            f"Alerts go to the telegram bot {v['README.md', 'telegram bot']}.\n"
        ),
        "secret.yaml": (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: billing\ntype: Opaque\ndata:\n"
            f"  password: {v['secret.yaml', 'password']}\n"
            f"  api-token: {v['secret.yaml', 'api-token']}\n"
            "stringData:\n"
            f"  DATABASE_URL: |\n    {v['secret.yaml', 'DATABASE_URL']}\n"
        ),
        "docker-compose.yml": (
            "services:\n  db:\n    image: postgres:16\n    environment:\n"
            f"      POSTGRES_PASSWORD: {v['docker-compose.yml', 'POSTGRES_PASSWORD']}\n"
        ),
        "ci.yml": (
            "deploy:\n"
            f"  gitlab_token: {v['ci.yml', 'gitlab_token']}\n"
            f"  notify: https://hooks.slack.com/services/{v['ci.yml', 'slack webhook']}\n"
        ),
        "config.json": json.dumps(
            {
                "service": "billing",
                "api_key": v["config.json", "api_key"],
                "db": {"host": "db.internal", "password": v["config.json", "password"]},
                "stripe_secret": v["config.json", "stripe_secret"],
            },
            indent=2,
        ),
        "service-account.json": json.dumps(
            {
                "type": "service_account",
                "project_id": "billing-prod",
                "private_key_id": v["service-account.json", "private_key_id"],
                "private_key": "-----BEGIN PRIVATE KEY-----\n"
                + v["service-account.json", "private_key"].replace("\\n", "\n")
                + "\n-----END PRIVATE KEY-----\n",
                "client_email": "billing@billing-prod.iam.gserviceaccount.com",
            },
            indent=2,
        ),
        "settings.py": (
            "import os\n\nDEBUG = False\n"
            f"SECRET_KEY = '{v['settings.py', 'SECRET_KEY']}'\n"
            f'EMAIL_HOST_PASSWORD = "{v["settings.py", "EMAIL_HOST_PASSWORD"]}"\n'
            f"OPENAI_API_KEY = os.environ.get('OPENAI_API_KEY', '{v['settings.py', 'OPENAI_API_KEY']}')\n\n\n"
            "class Signing:\n"
            f'    signing_key: str = "{v["settings.py", "signing_key"]}"\n\n\n'
            f"SLACK = {{'token': '{v['settings.py', 'SLACK_BOT_TOKEN']}'}}\n"
        ),
        "setup-env.sh": (
            "# source this before running the server\n"
            f"export STRIPE_SECRET_KEY={v['setup-env.sh', 'STRIPE_SECRET_KEY']}\n"
            f"export SENDGRID_API_KEY={v['setup-env.sh', 'SENDGRID_API_KEY']}\n"
            f"export DB_PASS='{v['setup-env.sh', 'DB_PASS']}'\n"
            f"ENCRYPTION_KEY={v['setup-env.sh', 'ENCRYPTION_KEY']}\n"
        ),
        "config.ini": (
            "[anthropic]\n"
            f"api_key = {v['config.ini', 'anthropic api_key']}\n\n"
            "[smtp]\nhost = smtp.internal\n"
            f"password = {v['config.ini', 'smtp password']}\n\n"
            "[storage]\nconnection = DefaultEndpointsProtocol=https;AccountName=billing;"
            f"AccountKey={v['config.ini', 'AccountKey']};EndpointSuffix=core.windows.net\n"
        ),
        "ci-bot_accessKeys.csv": (
            "User name,Password,Access key ID,Secret access key,Console login link\n"
            f"ci-bot,,{v['ci-bot_accessKeys.csv', 'Access key ID']},"
            f"{v['ci-bot_accessKeys.csv', 'Secret access key']},"
            "https://billing.signin.aws.amazon.com/console\n"
        ),
        "analysis.ipynb": make_notebook(
            [
                (
                    "markdown",
                    f"# Churn analysis\n\nThe maps key is {v['analysis.ipynb', 'GOOGLE_MAPS_KEY']}.",
                ),
                ("code", f'import openai\nopenai.api_key = "{v["analysis.ipynb", "openai.api_key"]}"'),
                ("code", f'import os\nos.environ["HF_TOKEN"] = "{v["analysis.ipynb", "HF_TOKEN"]}"'),
            ]
        ),
        "rotating.md": PROSE,
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
