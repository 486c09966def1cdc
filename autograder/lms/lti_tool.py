"""The LTI 1.3 tool's own side: its configuration, its keys, and validating a launch.

All signing and verifying is PyJWT's (RS256 over ``cryptography``); nothing here is crypto of
its own. A launch (IMS LTI 1.3 core, section 5.1, and the IMS Security Framework 5.1.3) is
refused unless the id_token is signed by a key of the platform's JWKS, its ``iss`` is the
platform, its ``aud`` holds our client id (and ``azp`` is ours when ``aud`` holds others),
it has not expired, its ``nonce`` is the one sent with *this* login's ``state`` (each state
is used once, within STATE_SECONDS), its ``deployment_id`` is one the instructor registered,
and it is an LTI 1.3.0 resource link launch.
"""
from __future__ import annotations

import json
import os
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .grades import GradesError

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
ALGORITHM = "RS256"  # what LTI 1.3 requires of every platform and tool
LEEWAY = 5  # seconds of clock difference tolerated on exp/iat
STATE_SECONDS = 600  # a login's state is good for this long, once


class LtiError(ValueError):
    """A launch, grant or service call refused; the message is one line."""


@dataclass(frozen=True)
class ToolConfig:
    issuer: str  # the platform's iss
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str  # the platform's OIDC authorisation endpoint
    auth_token_url: str  # its OAuth 2 token endpoint
    key_set_url: str  # its JWKS
    keys: Path  # the folder `autograder lti keys` wrote
    url: str  # this tool's public base URL: /login, /launch, /jwks.json under it
    listen: str = "127.0.0.1:0"
    state: Path = Path(".")  # where launches leave each course's service endpoints (contexts.json)
    auth_audience: str = ""  # the token endpoint's audience, when the platform names one (else the URL)

    @property
    def token_audience(self) -> str:
        return self.auth_audience or self.auth_token_url


REQUIRED = ("issuer", "client_id", "deployment_ids", "auth_login_url", "auth_token_url", "key_set_url", "keys", "url")


def read_config(path: Path) -> ToolConfig:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise GradesError(f"cannot read the LTI configuration {path}: {e}") from e
    if not isinstance(raw, dict):
        raise GradesError(f"{path}: an LTI configuration is a JSON object")
    missing = [k for k in REQUIRED if not raw.get(k)]
    unknown = sorted(set(raw) - set(ToolConfig.__dataclass_fields__))
    if missing or unknown:
        said = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(unknown)}"]
                                                                        if unknown else [])
        raise GradesError(f"{path}: {'; '.join(said)}")
    ids = raw["deployment_ids"]
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise GradesError(f"{path}: deployment_ids is a list of the deployment ids the platform gave")
    here = Path(path).resolve().parent
    for url_key in ("auth_login_url", "auth_token_url", "key_set_url", "url"):
        if not str(raw[url_key]).startswith(("https://", "http://127.0.0.1", "http://localhost")):
            raise GradesError(f"{path}: {url_key} must be https:// (plain http only on this machine)")
    return ToolConfig(**{**raw, "deployment_ids": tuple(ids), "keys": here / raw["keys"],
                         "state": here / raw.get("state", "."), "url": raw["url"].rstrip("/")})


# ---------------------------------------------------------------- the tool's keys

@dataclass(frozen=True)
class ToolKey:
    kid: str
    private_pem: bytes
    jwks: dict  # the public half, as /jwks.json serves it


def make_keys(folder: Path) -> ToolKey:
    """A new RSA key pair: ``private.pem`` (mode 600) and ``jwks.json`` (the public key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    folder = Path(folder)
    if (folder / "private.pem").exists():
        raise GradesError(f"{folder / 'private.pem'} exists: a new key would lock out the platforms that know this "
                          "one; give another --out")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    kid = uuid.uuid4().hex
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwks = {"keys": [{**public, "kid": kid, "alg": ALGORITHM, "use": "sig"}]}
    folder.mkdir(parents=True, exist_ok=True)
    private = folder / "private.pem"
    with open(private, "xb", opener=lambda p, f: os.open(p, f, 0o600)) as out:
        out.write(pem)
    (folder / "jwks.json").write_text(json.dumps(jwks, indent=1) + "\n")
    return ToolKey(kid, pem, jwks)


def load_keys(folder: Path) -> ToolKey:
    try:
        pem = (Path(folder) / "private.pem").read_bytes()
        jwks = json.loads((Path(folder) / "jwks.json").read_text())
        kid = jwks["keys"][0]["kid"]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise GradesError(f"no tool keys in {folder} (make them with `autograder lti keys --out {folder}`): "
                          f"{e}") from e
    return ToolKey(kid, pem, jwks)


# ---------------------------------------------------------------- login and launch

@dataclass
class States:
    """Each login's state -> its nonce, used once, within STATE_SECONDS."""
    pending: dict[str, tuple[str, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new(self) -> tuple[str, str]:
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = time.monotonic()
        with self.lock:
            self.pending = {s: v for s, v in self.pending.items() if now - v[1] < STATE_SECONDS}
            self.pending[state] = (nonce, now)
        return state, nonce

    def take(self, state: str) -> str:
        with self.lock:
            entry = self.pending.pop(state, None)
        if entry is None or time.monotonic() - entry[1] >= STATE_SECONDS:
            raise LtiError("launch refused: unknown, used or expired state (start again from the course)")
        return entry[0]


def login_redirect(config: ToolConfig, params: dict[str, str], states: States) -> tuple[str, str]:
    """OIDC third-party login initiation: the URL to send the browser to, and the state."""
    import urllib.parse

    if params.get("iss") != config.issuer:
        raise LtiError(f"login refused: iss {params.get('iss', '')[:80]!r} is not the configured platform")
    if params.get("client_id") and params["client_id"] != config.client_id:
        raise LtiError("login refused: client_id is not this tool's")
    if not params.get("login_hint"):
        raise LtiError("login refused: no login_hint")
    target = params.get("target_link_uri", f"{config.url}/launch")
    if not target.startswith(config.url):
        raise LtiError("login refused: target_link_uri is not this tool")
    state, nonce = states.new()
    query = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
             "client_id": config.client_id, "redirect_uri": f"{config.url}/launch", "login_hint": params["login_hint"],
             "state": state, "nonce": nonce}
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    return f"{config.auth_login_url}?{urllib.parse.urlencode(query)}", state


@dataclass(frozen=True)
class Launch:
    user: str  # sub: the platform's user id
    name: str
    email: str
    roles: tuple[str, ...]
    context: str  # the course's id on the platform
    context_title: str
    lineitems: str  # AGS: the course's line items URL ("" when the platform grants none)
    ags_scopes: tuple[str, ...]
    memberships: str  # NRPS: the course's memberships URL

    @property
    def instructor(self) -> bool:
        # context (membership) roles only: an institution role says nothing of this course
        return any(r.endswith(("/membership#Instructor", "/membership#Administrator")) or "/membership/Instructor#" in r
                   for r in self.roles)


class Verifier:
    """Checks id_tokens against the platform's JWKS (fetched, cached by PyJWT's client)."""

    def __init__(self, config: ToolConfig):
        import jwt

        self.config = config
        self.jwks = jwt.PyJWKClient(config.key_set_url, cache_keys=True, lifespan=300, timeout=30)

    def launch(self, id_token: str, state: str, states: States) -> Launch:
        import jwt

        nonce = states.take(state)  # used up whatever follows: a refused launch cannot be replayed
        c = self.config
        try:
            key = self.jwks.get_signing_key_from_jwt(id_token)
            claims = jwt.decode(id_token, key.key, algorithms=[ALGORITHM], audience=c.client_id, issuer=c.issuer,
                                leeway=LEEWAY, options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]})
        except jwt.PyJWKClientError as e:
            raise LtiError(f"launch refused: no key of the platform's JWKS signed this id_token ({e})") from None
        except jwt.InvalidTokenError as e:
            raise LtiError(f"launch refused: id_token {type(e).__name__}: {e}") from None
        aud = claims["aud"]
        if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != c.client_id:
            raise LtiError("launch refused: id_token for several audiences without azp naming this tool")
        if not secrets.compare_digest(str(claims["nonce"]), nonce):
            raise LtiError("launch refused: the id_token's nonce is not this login's")
        if claims.get(CLAIM + "deployment_id") not in c.deployment_ids:
            raise LtiError(f"launch refused: deployment_id {str(claims.get(CLAIM + 'deployment_id'))[:80]!r} "
                           "is not one this tool was registered with")
        if claims.get(CLAIM + "version") != "1.3.0":
            raise LtiError("launch refused: not an LTI 1.3.0 message")
        if claims.get(CLAIM + "message_type") != "LtiResourceLinkRequest":
            raise LtiError(f"launch refused: message_type {str(claims.get(CLAIM + 'message_type'))[:60]!r} is not "
                           "a resource link launch")
        context = claims.get(CLAIM + "context") or {}
        ags = claims.get(AGS_CLAIM) or {}
        nrps = claims.get(NRPS_CLAIM) or {}
        roles = claims.get(CLAIM + "roles") or []
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise LtiError("launch refused: roles is not a list of strings")
        return Launch(str(claims["sub"]), str(claims.get("name", "")), str(claims.get("email", "")), tuple(roles),
                      str(context.get("id", "")), str(context.get("title", "")), str(ags.get("lineitems", "")),
                      tuple(str(s) for s in ags.get("scope", []) or []), str(nrps.get("context_memberships_url", "")))


def record_context(config: ToolConfig, launch: Launch) -> Path:
    """Keep the course's service endpoints from an instructor's launch, for `export lti-scores`."""
    from ..results import write_atomic

    path = config.state / "contexts.json"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    known[launch.context] = {"title": launch.context_title, "lineitems": launch.lineitems,
                             "scopes": list(launch.ags_scopes), "memberships": launch.memberships}
    config.state.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(known, indent=1, sort_keys=True) + "\n")
    return path


def read_context(config: ToolConfig, context: str | None) -> tuple[str, dict]:
    path = config.state / "contexts.json"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        raise GradesError(f"no course has launched the tool yet ({path}): open the tool once from the course "
                          "as its instructor") from None
    if context is None:
        if len(known) != 1:
            raise GradesError(f"{len(known)} courses in {path}: choose one with --context "
                              f"({', '.join(sorted(known))})")
        context = next(iter(known))
    if context not in known:
        raise GradesError(f"course {context!r} is not in {path}: open the tool once from that course")
    return context, known[context]
