"""A small LTI 1.3 Advantage platform for the tests, on PyJWT as the tool is: it *validates*
everything the tool presents and says why it refuses, one line.

    python tests/lti_platform.py   (prints its port, serves 127.0.0.1 until killed)

- ``POST /_register`` (the admin's "developer key"): client_id, deployment_id, the tool's
  JWKS URL, redirect URI and login URL;
- ``GET /jwks``: the platform's public key;
- ``GET /auth``: the OIDC authorisation request (scope openid, response_type id_token,
  response_mode form_post, prompt none, the registered client_id and redirect_uri, a
  nonce, a known login_hint), answered with the auto-posting form of a signed id_token;
- ``POST /token``: the client-credentials grant; the client assertion must be RS256-signed
  by a key of the tool's JWKS (fetched from the registered URL), with iss = sub = client_id,
  aud = this token URL, unexpired, a jti never seen before, and only grantable scopes;
- AGS: ``/courses/7/lineitems`` (GET pages of one item, POST to create) and
  ``.../lineitems/N/scores``; NRPS: ``/courses/7/memberships`` (pages of two) - each needs
  a bearer token that holds the scope the IMS specifications name for it;
- ``POST /_issue``: an id_token signed by the platform with the claims given (the tests'
  way to make a wrong audience or an expired token that only a platform could sign);
- ``GET /_state``: what it recorded (line items, scores, refusals).
"""
from __future__ import annotations

import json
import secrets
import sys
import threading
import time
import urllib.parse
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
SCOPES = {
    "lineitem": "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "lineitem.readonly": "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "score": "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "memberships": "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
}
SCORE_FIELDS = {"userId", "scoreGiven", "scoreMaximum", "activityProgress", "gradingProgress", "timestamp"}
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
MEMBERS = [
    {"user_id": "lti-teacher", "name": "Tess Teacher", "email": "tess@uni.edu", "roles": [INSTRUCTOR]},
    {"user_id": "lti-11", "name": "Ada Lovelace", "email": "Ada@uni.edu", "roles": [LEARNER]},
    {"user_id": "lti-12", "name": "Ben Babbage", "email": "ben@uni.edu", "roles": [LEARNER],
     "lis_person_sourcedid": "u12"},
    {"user_id": "lti-13", "name": "Cy Young", "email": "cy@uni.edu", "roles": [LEARNER]},
    {"user_id": "lti-14", "name": "Dee Dropped", "email": "dee@uni.edu", "roles": [LEARNER], "status": "Deleted"},
]

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
KID = "platform-1"
JWKS = {"keys": [{**json.loads(RSAAlgorithm.to_jwk(KEY.public_key())), "kid": KID, "alg": "RS256", "use": "sig"}]}
LOCK = threading.Lock()
STATE: dict = {"lineitems": [], "scores": {}, "refusals": [], "tokens": {}, "jtis": [], "tool": None}


def base() -> str:
    return f"http://127.0.0.1:{SERVER.server_address[1]}"


def id_token(tool: dict, user: dict, nonce: str, **override) -> str:
    now = int(time.time())
    claims = {
        "iss": base(), "aud": tool["client_id"], "sub": user["user_id"], "iat": now, "exp": now + 300, "nonce": nonce,
        "name": user["name"], "email": user["email"],
        CLAIM + "deployment_id": tool["deployment_id"], CLAIM + "version": "1.3.0",
        CLAIM + "message_type": "LtiResourceLinkRequest", CLAIM + "roles": user["roles"],
        CLAIM + "target_link_uri": tool["redirect_uri"], CLAIM + "resource_link": {"id": "rl-1"},
        CLAIM + "context": {"id": "7", "title": "Transformers 101"},
        "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
            "scope": [SCOPES["lineitem"], SCOPES["score"]], "lineitems": f"{base()}/courses/7/lineitems"},
        "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
            "context_memberships_url": f"{base()}/courses/7/memberships", "service_versions": ["2.0"]},
    }
    claims.update(override)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, PEM, algorithm="RS256",
                      headers={"kid": KID})


class Platform(BaseHTTPRequestHandler):
    def do_GET(self):
        path, _, query = self.path.partition("?")
        params = dict(urllib.parse.parse_qsl(query))
        if path == "/jwks":
            return self.send_json(200, JWKS)
        if path == "/_state":
            with LOCK:
                return self.send_json(200, {k: STATE[k] for k in ("lineitems", "scores", "refusals")})
        if path == "/auth":
            return self.auth(params)
        if path == "/courses/7/lineitems":
            if not self.authorised(SCOPES["lineitem"], SCOPES["lineitem.readonly"]):
                return
            if self.headers.get("Accept") != "application/vnd.ims.lis.v2.lineitemcontainer+json":
                return self.refuse(406, "line items are read as application/vnd.ims.lis.v2.lineitemcontainer+json")
            page = int(params.get("page", 0))
            with LOCK:
                items = STATE["lineitems"][page:page + 1]
                more = page + 1 < len(STATE["lineitems"])
            link = {"Link": f'<{base()}/courses/7/lineitems?page={page + 1}>; rel="next"'} if more else {}
            return self.send_json(200, items, link)
        if path == "/courses/7/memberships":
            if not self.authorised(SCOPES["memberships"]):
                return
            if self.headers.get("Accept") != "application/vnd.ims.lti-nrps.v2.membershiplistcontainer+json":
                return self.refuse(406, "memberships are read as the NRPS membership container media type")
            page = int(params.get("page", 0))
            chunk = MEMBERS[2 * page:2 * page + 2]
            link = {"Link": f'<{base()}/courses/7/memberships?page={page + 1}>; rel="next"'} \
                if 2 * page + 2 < len(MEMBERS) else {}
            return self.send_json(200, {"id": f"{base()}/courses/7/memberships", "context": {"id": "7"},
                                        "members": chunk}, link)
        return self.refuse(404, f"no {path}")

    def do_POST(self):
        path = self.path.partition("?")[0]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path == "/_register":
            with LOCK:
                STATE["tool"] = json.loads(body)
                STATE["tool"]["jwks"] = jwt.PyJWKClient(STATE["tool"]["jwks_url"], cache_keys=False)
            return self.send_json(200, {})
        if path == "/_issue":
            spec = json.loads(body)
            who = spec.pop("user", "lti-teacher")
            user = next(m for m in MEMBERS if m["user_id"] == who)
            return self.send_json(200, {"id_token": id_token(STATE["tool"], user, spec.pop("nonce"), **spec)})
        if path == "/token":
            return self.grant(dict(urllib.parse.parse_qsl(body.decode())))
        if path == "/courses/7/lineitems":
            if not self.authorised(SCOPES["lineitem"]):
                return
            if self.headers.get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json":
                return self.refuse(415, "a line item is posted as application/vnd.ims.lis.v2.lineitem+json")
            item = json.loads(body)
            if not isinstance(item.get("scoreMaximum"), (int, float)) or item["scoreMaximum"] <= 0 \
                    or not item.get("label"):
                return self.refuse(400, "a line item needs a label and a positive scoreMaximum")
            with LOCK:
                item["id"] = f"{base()}/courses/7/lineitems/{len(STATE['lineitems']) + 1}"
                STATE["lineitems"].append(item)
            return self.send_json(201, item)
        if path.startswith("/courses/7/lineitems/") and path.endswith("/scores"):
            if not self.authorised(SCOPES["score"]):
                return
            if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                return self.refuse(415, "a score is posted as application/vnd.ims.lis.v1.score+json")
            item = base() + path[:-len("/scores")]
            score = json.loads(body)
            with LOCK:
                known = next((i for i in STATE["lineitems"] if i["id"] == item), None)
            learners = {m["user_id"] for m in MEMBERS
                        if LEARNER in m["roles"] and m.get("status", "Active") == "Active"}
            if known is None:
                return self.refuse(404, f"no line item {item}")
            if set(score) != SCORE_FIELDS or (score["activityProgress"], score["gradingProgress"]) != (
                    "Completed", "FullyGraded") or not 0 <= score["scoreGiven"] <= score["scoreMaximum"]:
                return self.refuse(400, "not an AGS score")
            if score["userId"] not in learners:
                return self.refuse(422, f"{score['userId']} is not a learner of this course")
            with LOCK:
                STATE["scores"].setdefault(item, []).append(score)
            return self.send_json(200, {})
        return self.refuse(404, f"no {path}")

    def auth(self, p: dict):
        tool = STATE["tool"]
        expected = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
                    "client_id": tool["client_id"], "redirect_uri": tool["redirect_uri"]}
        wrong = [k for k, v in expected.items() if p.get(k) != v]
        if wrong or not p.get("nonce") or not p.get("state"):
            return self.refuse(400, f"authorisation request: wrong or missing {', '.join(wrong) or 'nonce/state'}")
        user = next((m for m in MEMBERS if m["user_id"] == p.get("login_hint")), None)
        if user is None:
            return self.refuse(400, "authorisation request: unknown login_hint")
        token = id_token(tool, user, p["nonce"])
        page = (f'<form method="post" action="{escape(tool["redirect_uri"])}">'
                f'<input type="hidden" name="id_token" value="{escape(token)}">'
                f'<input type="hidden" name="state" value="{escape(p["state"])}"></form>')
        self.send(200, page.encode(), "text/html")

    def grant(self, form: dict):
        tool = STATE["tool"]
        if form.get("grant_type") != "client_credentials":
            return self.refuse(400, "invalid_request: grant_type must be client_credentials")
        if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return self.refuse(400, "invalid_request: client_assertion_type must be jwt-bearer (RFC 7523)")
        assertion = form.get("client_assertion", "")
        try:
            key = tool["jwks"].get_signing_key_from_jwt(assertion)
            claims = jwt.decode(assertion, key.key, algorithms=["RS256"], audience=f"{base()}/token",
                                issuer=tool["client_id"], options={"require": ["exp", "iat", "jti", "sub"]})
        except jwt.PyJWKClientError as e:
            return self.refuse(401, f"invalid_client: no key of the tool's JWKS signed the assertion ({e})")
        except jwt.InvalidTokenError as e:
            return self.refuse(401, f"invalid_client: assertion {type(e).__name__}: {e}")
        if claims["sub"] != tool["client_id"]:
            return self.refuse(401, "invalid_client: sub is not the client_id")
        if claims["exp"] - claims["iat"] > 3600:
            return self.refuse(401, "invalid_client: assertion valid for more than an hour")
        with LOCK:
            if claims["jti"] in STATE["jtis"]:
                return self.refuse(401, "invalid_client: jti replayed")
            STATE["jtis"].append(claims["jti"])
        asked = form.get("scope", "").split()
        if not asked or not set(asked) <= set(SCOPES.values()):
            return self.refuse(400, "invalid_scope: " + " ".join(sorted(set(asked) - set(SCOPES.values()))))
        access = secrets.token_urlsafe(24)
        with LOCK:
            STATE["tokens"][access] = (set(asked), time.time() + 3600)
        self.send_json(200, {"access_token": access, "token_type": "Bearer", "expires_in": 3600,
                             "scope": " ".join(asked)})

    def authorised(self, *scopes: str) -> bool:
        header = self.headers.get("Authorization", "")
        held = STATE["tokens"].get(header[len("Bearer "):]) if header.startswith("Bearer ") else None
        if held is None or held[1] < time.time():
            self.refuse(401, "no valid bearer token")
            return False
        if not held[0] & set(scopes):
            self.refuse(403, f"the token lacks {' or '.join(scopes)}")
            return False
        return True

    def refuse(self, code: int, why: str):
        with LOCK:
            STATE["refusals"].append(why)
        self.send(code, (why + "\n").encode(), "text/plain")

    def send_json(self, code: int, doc, headers: dict | None = None):
        self.send(code, json.dumps(doc).encode(), "application/json", headers)

    def send(self, code: int, body: bytes, kind: str, headers: dict | None = None):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


SERVER = ThreadingHTTPServer(("127.0.0.1", 0), Platform)
if __name__ == "__main__":
    print(SERVER.server_address[1], flush=True)
    try:
        SERVER.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)
