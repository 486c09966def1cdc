"""The LTI 1.3 Advantage tool end to end, against tests/lti_platform.py: a platform stub on
127.0.0.1 (a free port, stopped by its pid) that validates every JWT and scope the tool shows
it. The tool runs as `autograder lti serve`; a cookie-keeping client plays the browser.
"""
from __future__ import annotations

import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from autograder import cli
from autograder.class_results import StudentRow
from autograder.lms import lti_services as svc
from autograder.lms.lti_tool import LtiError, load_keys, read_config
from autograder.report.table import grades_csv

HERE = Path(__file__).resolve().parent
CLIENT, DEPLOYMENT = "tool-1", "dep-1"
SCOPES = [svc.SCOPE_LINEITEM, svc.SCOPE_SCORE, svc.SCOPE_MEMBERSHIPS]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, data: bytes | None = None, opener=None) -> tuple[int, str, str]:
    """(status, body, final URL)"""
    try:
        with (opener or urllib.request.build_opener()).open(url, data=data, timeout=30) as r:
            return r.status, r.read().decode(), r.geturl()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), url


@pytest.fixture(scope="module")
def platform():
    proc = subprocess.Popen([sys.executable, str(HERE / "lti_platform.py")], stdout=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{int(proc.stdout.readline())}"
    yield base
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(10)


@pytest.fixture(scope="module")
def tool_config(platform, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tool")
    assert cli.main(["lti", "keys", "--out", str(folder / "keys")]) == 0
    port = free_port()
    config = {"issuer": platform, "client_id": CLIENT, "deployment_ids": [DEPLOYMENT],
              "auth_login_url": f"{platform}/auth", "auth_token_url": f"{platform}/token",
              "key_set_url": f"{platform}/jwks", "keys": "keys", "url": f"http://127.0.0.1:{port}",
              "listen": f"127.0.0.1:{port}", "state": "state"}
    (folder / "tool.json").write_text(json.dumps(config))
    return folder / "tool.json"


@pytest.fixture(scope="module")
def tool(tool_config, platform):
    """`autograder lti serve`, registered with the platform as its developer key."""
    exe = Path(sys.executable).with_name("autograder")
    proc = subprocess.Popen([str(exe), "lti", "serve", "--config", str(tool_config)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "listening on" in line, line + proc.stderr.read()
    url = json.loads(tool_config.read_text())["url"]
    registration = {"client_id": CLIENT, "deployment_id": DEPLOYMENT, "jwks_url": f"{url}/jwks.json",
                    "redirect_uri": f"{url}/launch", "login_url": f"{url}/login"}
    assert get(f"{platform}/_register", json.dumps(registration).encode())[0] == 200
    yield url
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(10)


class Browser:
    """Keeps cookies, follows the login's redirect to the platform, posts the platform's form."""

    def __init__(self):
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))

    def login(self, tool: str, platform: str, user: str = "lti-teacher") -> tuple[str, str, str]:
        """(the platform's form page, the state, the nonce the tool sent)"""
        query = urllib.parse.urlencode({"iss": platform, "login_hint": user, "target_link_uri": f"{tool}/launch",
                                        "client_id": CLIENT})
        status, page, final = get(f"{tool}/login?{query}", opener=self.opener)
        assert status == 200, page
        sent = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(final).query))
        return page, sent["state"], sent["nonce"]

    def launch(self, tool: str, id_token: str, state: str) -> tuple[int, str]:
        body = urllib.parse.urlencode({"id_token": id_token, "state": state}).encode()
        return get(f"{tool}/launch", body, self.opener)[:2]


def form_fields(page: str) -> dict[str, str]:
    return {m[1]: html.unescape(m[2]) for m in re.finditer(r'name="([^"]+)" value="([^"]*)"', page)}


def issue(platform: str, nonce: str, **claims) -> str:
    """An id_token the platform itself signs, with these claims changed."""
    return json.loads(get(f"{platform}/_issue", json.dumps({"nonce": nonce, **claims}).encode())[1])["id_token"]


def forged(nonce: str, platform: str, kid: str = "platform-1") -> str:
    """Every claim right, signed by a key that is not the platform's."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    claims = jwt.decode(issue(platform, nonce), options={"verify_signature": False})
    claims.update(iat=now, exp=now + 300)
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


def state_of(platform: str) -> dict:
    return json.loads(get(f"{platform}/_state")[1])


# ---------------------------------------------------------------- keys and JWKS

def test_the_tools_jwks_is_its_public_key_only(tool, tool_config):
    served = json.loads(get(f"{tool}/jwks.json")[1])
    key = load_keys(tool_config.parent / "keys")
    assert served == key.jwks and len(served["keys"]) == 1
    assert {"kty", "n", "e", "kid", "alg"} <= set(served["keys"][0])
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(served["keys"][0])  # no private part
    assert (tool_config.parent / "keys" / "private.pem").stat().st_mode & 0o777 == 0o600


def test_keys_are_never_overwritten(tool_config, capsys):
    before = (tool_config.parent / "keys" / "private.pem").read_bytes()
    assert cli.main(["lti", "keys", "--out", str(tool_config.parent / "keys")]) == 2
    assert "private.pem exists" in capsys.readouterr().err
    assert (tool_config.parent / "keys" / "private.pem").read_bytes() == before


# ---------------------------------------------------------------- login and launch

def test_an_instructors_launch_is_validated_and_keeps_the_courses_services(tool, platform, tool_config):
    browser = Browser()
    page, state, _ = browser.login(tool, platform)
    fields = form_fields(page)
    assert fields["state"] == state
    status, body = browser.launch(tool, fields["id_token"], state)
    assert status == 200 and "Launched as Tess Teacher in Transformers 101." in body
    contexts = json.loads((tool_config.parent / "state" / "contexts.json").read_text())
    assert contexts["7"]["lineitems"] == f"{platform}/courses/7/lineitems"
    assert contexts["7"]["memberships"] == f"{platform}/courses/7/memberships"


@pytest.mark.parametrize("roles", [
    ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
    ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor",
     "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
], ids=["learner", "instructor-elsewhere"])
def test_only_the_courses_instructor_leaves_its_services(tool, platform, tool_config, roles):
    path = tool_config.parent / "state" / "contexts.json"
    before = path.read_text() if path.exists() else None
    browser = Browser()
    _, state, nonce = browser.login(tool, platform, user="lti-11")
    token = issue(platform, nonce, user="lti-11", **{"https://purl.imsglobal.org/spec/lti/claim/roles": roles})
    status, body = browser.launch(tool, token, state)
    assert status == 200 and "Launched as Ada Lovelace" in body and "Grades for this course" not in body
    assert (path.read_text() if path.exists() else None) == before


def test_a_state_is_used_once(tool, platform):
    browser = Browser()
    page, state, _ = browser.login(tool, platform, user="lti-11")
    assert browser.launch(tool, form_fields(page)["id_token"], state)[0] == 200
    status, body = browser.launch(tool, form_fields(page)["id_token"], state)
    assert status == 401 and body == "launch refused: unknown, used or expired state (start again from the course)\n"


def test_a_launch_from_a_browser_that_did_not_log_in_is_refused(tool, platform):
    page, state, _ = Browser().login(tool, platform)
    status, body = Browser().launch(tool, form_fields(page)["id_token"], state)
    assert status == 401 and body == "launch refused: this browser did not start this login\n"


NOW = int(time.time())


@pytest.mark.parametrize("make, why", [
    (lambda p, n: forged(n, p), "id_token InvalidSignatureError: Signature verification failed"),
    (lambda p, n: forged(n, p, kid="unknown"), "no key of the platform's JWKS signed this id_token"),
    (lambda p, n: issue(p, n, aud="another-tool"), "id_token InvalidAudienceError: Audience doesn't match"),
    (lambda p, n: issue(p, n, iat=NOW - 900, exp=NOW - 600), "id_token ExpiredSignatureError: Signature has expired"),
    (lambda p, n: issue(p, n, iss="https://lms.example"), "id_token InvalidIssuerError: Invalid issuer"),
    (lambda p, n: issue(p, "not-" + n), "the id_token's nonce is not this login's"),
    (lambda p, n: issue(p, n, exp=None), 'id_token MissingRequiredClaimError: Token is missing the "exp" claim'),
    (lambda p, n: issue(p, n, **{"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-2"}),
     "deployment_id 'dep-2' is not one this tool was registered with"),
    (lambda p, n: issue(p, n, **{"https://purl.imsglobal.org/spec/lti/claim/version": "1.1"}),
     "not an LTI 1.3.0 message"),
    (lambda p, n: issue(p, n, aud=["another-tool", CLIENT]), "several audiences without azp"),
], ids=["forged", "unknown-kid", "wrong-audience", "expired", "wrong-issuer", "wrong-nonce", "no-exp",
        "wrong-deployment", "not-1.3", "no-azp"])
def test_a_bad_id_token_is_refused_with_one_line(tool, platform, make, why):
    browser = Browser()
    _, state, nonce = browser.login(tool, platform)
    status, body = browser.launch(tool, make(platform, nonce), state)
    assert status == 401 and body.startswith("launch refused: ") and why in body and body.count("\n") == 1


@pytest.mark.parametrize("params, why", [
    ({"iss": "https://lms.example", "login_hint": "x"}, "is not the configured platform"),
    ({"login_hint": "x", "client_id": "other"}, "client_id is not this tool's"),
    ({}, "no login_hint"),
    ({"login_hint": "x", "target_link_uri": "https://evil.example/launch"}, "target_link_uri is not this tool"),
])
def test_a_bad_login_initiation_is_refused_with_one_line(tool, platform, params, why):
    params = {"iss": platform, **params}
    status, body, _ = get(f"{tool}/login?{urllib.parse.urlencode(params)}")
    assert status == 400 and why in body and body.count("\n") == 1


# ---------------------------------------------------------------- the grant, AGS and NRPS

@pytest.fixture
def grades(tmp_path) -> Path:
    rows = [StudentRow(student=s, score=v, max_score=37, exercises={"softmax": v})
            for s, v in {"ada@uni.edu": 30, "u12": 37, "ghost@uni.edu": 5, "tess@uni.edu": 1}.items()]
    path = tmp_path / "ps1.csv"
    path.write_text(grades_csv(rows, ["softmax"], failed=("cy@uni.edu",)))
    return path


def test_scores_go_to_a_line_item_made_then_found_by_problem_set(tool, platform, tool_config, grades, capsys):
    test_an_instructors_launch_is_validated_and_keeps_the_courses_services(tool, platform, tool_config)
    before = len(state_of(platform)["lineitems"])
    args = ["export", "lti-scores", "--config", str(tool_config), "--assignment", "ps1", "--grades", str(grades)]
    assert cli.main(args) == 0
    out = capsys.readouterr()
    assert "posted 2 of 2 scores" in out.out
    assert "1 student(s) not graded, no score sent (the platform keeps what it has): cy@uni.edu" in out.err
    assert "2 student(s) not among the course's learners, no score: ghost@uni.edu, tess@uni.edu" in out.err
    seen = state_of(platform)
    made = seen["lineitems"][before:]
    assert [(i["resourceId"], i["label"], i["scoreMaximum"]) for i in made] == [("ps1", "ps1", 37)]
    posted = {s["userId"]: s["scoreGiven"] for s in seen["scores"][made[0]["id"]]}
    assert posted == {"lti-11": 30, "lti-12": 37}  # Ada by her email (any case), Ben by his SIS id
    # again, with another set's line item in front of it (the platform pages one item at a time)
    assert cli.main([*args[:4], "--assignment", "ps2", "--grades", str(grades)]) == 0
    assert cli.main(args) == 0
    assert "(found)" in capsys.readouterr().err
    seen = state_of(platform)
    assert [i["resourceId"] for i in seen["lineitems"][before:]] == ["ps1", "ps2"]
    assert len(seen["scores"][made[0]["id"]]) == 4


@pytest.fixture(scope="module")
def config(tool, tool_config):
    return read_config(tool_config)


def test_the_grant_gives_a_token_with_the_scopes_asked(config, tool_config):
    tok = svc.token(config, load_keys(config.keys), SCOPES)
    assert set(tok.scopes) == set(SCOPES) and tok.access_token


def refused(call) -> str:
    with pytest.raises(LtiError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message
    return message


def test_an_expired_assertion_is_refused(config):
    message = refused(lambda: svc.token(config, load_keys(config.keys), SCOPES, now=time.time() - 3600))
    assert "token grant refused" in message and "HTTP 401" in message and "ExpiredSignatureError" in message


def test_an_assertion_for_another_audience_is_refused(config):
    import dataclasses

    other = dataclasses.replace(config, auth_audience="https://lms.example/login/oauth2/token")
    assert "InvalidAudienceError" in refused(lambda: svc.token(other, load_keys(config.keys), SCOPES))


def test_an_assertion_signed_by_a_key_the_tool_does_not_publish_is_refused(config):
    import dataclasses

    key = load_keys(config.keys)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    message = refused(lambda: svc.token(config, dataclasses.replace(key, private_pem=stranger), SCOPES))
    assert "InvalidSignatureError" in message


def test_a_scope_the_platform_does_not_know_is_refused(config):
    assert "invalid_scope" in refused(lambda: svc.token(config, load_keys(config.keys), ["https://x/scope/all"]))


def test_a_token_without_the_score_scope_cannot_post_a_score(config, platform):
    tok = svc.token(config, load_keys(config.keys), [svc.SCOPE_LINEITEM])
    item, _ = svc.line_item(f"{platform}/courses/7/lineitems", tok, "ps9", "ps9", 10)
    failed = svc.post_scores(item, tok, [{"userId": "lti-11", "scoreGiven": 1, "scoreMaximum": 10,
                                          "activityProgress": "Completed", "gradingProgress": "FullyGraded",
                                          "timestamp": "2026-12-01T00:00:00.000+00:00"}])
    assert len(failed) == 1 and "HTTP 403" in failed[0][1] and "lacks" in failed[0][1]


def test_a_score_the_platform_refuses_is_named_and_the_others_still_go(config, platform):
    tok = svc.token(config, load_keys(config.keys), SCOPES)
    item, _ = svc.line_item(f"{platform}/courses/7/lineitems", tok, "ps8", "ps8", 10)
    score = {"scoreGiven": 1, "scoreMaximum": 10, "activityProgress": "Completed",
             "gradingProgress": "FullyGraded", "timestamp": "2026-12-01T00:00:00.000+00:00"}
    failed = svc.post_scores(item, tok, [{"userId": u, **score} for u in ("lti-teacher", "lti-13")])
    assert [u for u, _ in failed] == ["lti-teacher"] and "HTTP 422" in failed[0][1]
    assert [s["userId"] for s in state_of(platform)["scores"][item]] == ["lti-13"]


def test_the_members_are_read_across_pages_and_the_departed_left_out(config, platform):
    tok = svc.token(config, load_keys(config.keys), [svc.SCOPE_MEMBERSHIPS])
    people = svc.members(f"{platform}/courses/7/memberships", tok)
    assert [m.user_id for m in people] == ["lti-teacher", "lti-11", "lti-12", "lti-13"]
    ids = svc.user_ids(people)
    assert ids["ada@uni.edu"] == "lti-11" and ids["u12"] == "lti-12" and "dee@uni.edu" not in ids
    assert "tess@uni.edu" not in ids  # the instructor is no learner


def test_a_key_two_members_share_maps_to_neither():
    people = [svc.Member(u, "same@uni.edu", "", (svc.LEARNER,), "") for u in ("a", "b")]
    assert "same@uni.edu" not in svc.user_ids(people)


# ---------------------------------------------------------------- configuration

def test_export_before_any_launch_says_what_to_do(tool_config, grades, tmp_path, capsys):
    fresh = {**json.loads(tool_config.read_text()), "keys": str(tool_config.parent / "keys"),
             "state": str(tmp_path / "state")}
    (tmp_path / "t.json").write_text(json.dumps(fresh))
    assert cli.main(["export", "lti-scores", "--config", str(tmp_path / "t.json"), "--assignment", "ps1",
                     "--grades", str(grades)]) == 2
    err = capsys.readouterr().err
    assert "no course has launched the tool yet" in err and err.count("\n") == 1


@pytest.mark.parametrize("change, why", [
    ({"client_id": ""}, "missing client_id"),
    ({"secret": "x"}, "unknown secret"),
    ({"auth_token_url": "http://lms.example/token"}, "auth_token_url must be https://"),
    ({"deployment_ids": "dep-1"}, "deployment_ids is a list"),
])
def test_a_bad_configuration_is_one_line(tool_config, tmp_path, capsys, change, why):
    (tmp_path / "t.json").write_text(json.dumps({**json.loads(tool_config.read_text()), **change}))
    assert cli.main(["lti", "serve", "--config", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1


def test_the_launch_page_shows_a_name_as_text():
    """The name on the page after a launch comes from the platform's id_token: text, never markup."""
    from autograder.report.render import render

    name = "<img src=x onerror=alert(1)> o'neil & co {{ 7*7 }}"
    page = render("lti_launch.html.j2", lines=[f"Launched as {name} in Transformers 101."])
    assert "<img" not in page and "49" not in page and f"Launched as {name}" in html.unescape(page)
