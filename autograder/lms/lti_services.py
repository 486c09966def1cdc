"""LTI Advantage services, called by the tool with a token it obtains itself:

- the OAuth 2 client-credentials grant with a signed JWT as the client's proof (RFC 7523,
  the IMS Security Framework 4.1): ``iss`` = ``sub`` = our client id, ``aud`` the token
  endpoint, a short ``exp`` and a fresh ``jti``, signed RS256 with the tool's key (PyJWT);
- Assignment and Grade Services 2.0: the course's line items read (following ``Link:
  rel="next"`` pages), one found by ``resourceId`` (the problem set) or created, and one
  Score per student POSTed to its ``/scores``;
- Names and Role Provisioning Services 2.0: the course's members (pages followed), so a
  grades.csv student (an email or login) is mapped to the platform's user id.
"""
from __future__ import annotations

import json
import re
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from .lti_tool import ALGORITHM, LtiError, ToolConfig, ToolKey

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINEITEM = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS = "application/vnd.ims.lis.v2.lineitemcontainer+json"
MEMBERSHIPS = "application/vnd.ims.lti-nrps.v2.membershiplistcontainer+json"
ASSERTION_SECONDS = 300
TIMEOUT = 30
MAX_PAGES = 1000  # a platform whose "next" never ends is refused, not followed for ever
_NEXT = re.compile(r'<([^>]*)>\s*;[^,]*\brel="?next"?')


def assertion(config: ToolConfig, key: ToolKey, now: float | None = None) -> str:
    now = time.time() if now is None else now
    claims = {"iss": config.client_id, "sub": config.client_id, "aud": config.token_audience,
              "iat": int(now), "exp": int(now) + ASSERTION_SECONDS, "jti": secrets.token_urlsafe(24)}
    import jwt

    return jwt.encode(claims, key.private_pem, algorithm=ALGORITHM, headers={"kid": key.kid})


@dataclass(frozen=True)
class Token:
    access_token: str
    scopes: tuple[str, ...]


def token(config: ToolConfig, key: ToolKey, scopes: list[str], now: float | None = None) -> Token:
    body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE,
                                   "client_assertion": assertion(config, key, now), "scope": " ".join(scopes)})
    doc = _call("POST", config.auth_token_url, body.encode(), {"Content-Type": "application/x-www-form-urlencoded",
                                                                "Accept": "application/json"}, what="token grant")
    if not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
        raise LtiError(f"token grant: {config.auth_token_url} answered without an access_token")
    granted = tuple(str(doc.get("scope", " ".join(scopes))).split())
    lacking = [s for s in scopes if s not in granted]
    if lacking:
        raise LtiError(f"token grant: the platform did not grant {', '.join(lacking)}")
    return Token(doc["access_token"], granted)


def line_item(lineitems: str, tok: Token, resource_id: str, label: str, maximum: float) -> tuple[str, bool]:
    """The URL of the course's line item for ``resource_id``, made when missing; and whether it was made."""
    found = [i for i in _pages(lineitems, tok, LINEITEMS) if isinstance(i, dict) and i.get("resourceId") == resource_id]
    if len(found) > 1:
        raise LtiError(f"{len(found)} line items have resourceId {resource_id!r}: delete the extra ones on the "
                       "platform so a score cannot land on the wrong one")
    if found:
        if not isinstance(found[0].get("id"), str):
            raise LtiError(f"the line item for {resource_id!r} has no id URL")
        return found[0]["id"], False
    new = {"scoreMaximum": maximum, "label": label, "resourceId": resource_id, "tag": "autograder"}
    made = _call("POST", lineitems, json.dumps(new).encode(), {"Content-Type": LINEITEM, "Accept": LINEITEM,
                                                                **_auth(tok)}, what="line item creation")
    if not isinstance(made, dict) or not isinstance(made.get("id"), str):
        raise LtiError("line item creation: the platform's answer has no id URL")
    return made["id"], True


@dataclass(frozen=True)
class Member:
    user_id: str
    email: str
    name: str
    roles: tuple[str, ...]
    sourcedid: str  # lis_person_sourcedid: the SIS id, where the platform shares it


def members(memberships: str, tok: Token) -> list[Member]:
    out = []
    for m in _pages(memberships, tok, MEMBERSHIPS, key="members"):
        if not isinstance(m, dict) or not m.get("user_id"):
            continue
        if m.get("status", "Active") != "Active":
            continue
        out.append(Member(str(m["user_id"]), str(m.get("email", "")), str(m.get("name", "")),
                          tuple(str(r) for r in m.get("roles", []) or []), str(m.get("lis_person_sourcedid", ""))))
    return out


LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


def user_ids(people: list[Member]) -> dict[str, str]:
    """What a grades.csv student may be (email, SIS id, the user id itself), casefolded -> the
    user id of a learner of the course; a key two members share is left out (a score never
    goes to a guess), and so is everyone who is not a learner (a teacher's test run)."""
    seen: dict[str, set[str]] = {}
    for m in people:
        if LEARNER not in m.roles and "Learner" not in m.roles:
            continue
        for k in {m.email, m.sourcedid, m.user_id} - {""}:
            seen.setdefault(k.casefold(), set()).add(m.user_id)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def post_scores(lineitem: str, tok: Token, lines: list[dict]) -> list[tuple[str, str]]:
    """POST each Score; (userId, why) for each the platform did not accept."""
    from .lti import MEDIA_TYPE, scores_url

    url, failed = scores_url(lineitem), []
    for score in lines:
        try:
            _call("POST", url, json.dumps(score).encode(), {"Content-Type": MEDIA_TYPE, **_auth(tok)}, what="score")
        except LtiError as e:
            failed.append((score["userId"], str(e)))
    return failed


def _auth(tok: Token) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok.access_token}"}


def _pages(url: str, tok: Token, media: str, key: str | None = None) -> list:
    items: list = []
    for _ in range(MAX_PAGES):
        doc, headers = _call("GET", url, None, {"Accept": media, **_auth(tok)}, what="read", with_headers=True)
        page = doc.get(key) if key and isinstance(doc, dict) else doc
        if not isinstance(page, list):
            raise LtiError(f"{_host(url)}: the answer is not a list of {key or 'line items'}")
        items += page
        link = _NEXT.search(headers.get("Link", "") or "")
        if not link:
            return items
        url = urllib.parse.urljoin(url, link[1])
    raise LtiError(f"{_host(url)}: more than {MAX_PAGES} pages")


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url[:60]


def _call(method: str, url: str, body: bytes | None, headers: dict, *, what: str, with_headers: bool = False):
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            text, got = response.read(), dict(response.headers)
    except urllib.error.HTTPError as e:
        detail = e.read(300).decode("utf-8", "replace").strip().splitlines()
        raise LtiError(f"{what} refused by {_host(url)}: HTTP {e.code} {e.reason}"
                       + (f": {detail[0][:200]}" if detail else "")) from None
    except (urllib.error.URLError, OSError) as e:
        raise LtiError(f"{what}: cannot reach {_host(url)}: {getattr(e, 'reason', e)}") from None
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError:
        raise LtiError(f"{what}: {_host(url)} answered with no JSON") from None
    return (doc, got) if with_headers else doc
