"""``autograder lti serve --config FILE``: the tool's three endpoints, on the standard library's
HTTP server (put it behind the course's HTTPS proxy: the platform reaches ``url``):

    /login      OIDC third-party login initiation (GET or POST): redirect to the platform
    /launch     the platform's form_post of id_token and state: validated, then a short page
    /jwks.json  the tool's public key, which the platform checks our grant assertions with

The login's state goes to the browser as a cookie too; a launch whose state is not the
browser's own is refused (a login started elsewhere cannot be finished here). An instructor's
launch leaves the course's AGS and NRPS endpoints in ``state/contexts.json`` for
``autograder export lti-scores``.
"""
from __future__ import annotations

import json
import sys
import urllib.parse
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .lti_tool import LtiError, States, ToolConfig, Verifier, load_keys, login_redirect, record_context
from ..report.render import render

COOKIE = "autograder_lti_state"
MAX_BODY = 64 * 1024  # an id_token is a few kB


def serve(config: ToolConfig, ready=None) -> None:
    keys = load_keys(config.keys)
    states, verifier = States(), Verifier(config)
    secure = config.url.startswith("https://")

    class Tool(BaseHTTPRequestHandler):
        def do_GET(self):
            path, _, query = self.path.partition("?")
            if path == "/jwks.json":
                return self._send(200, json.dumps(keys.jwks).encode(), "application/json")
            if path == "/login":
                return self._login(dict(urllib.parse.parse_qsl(query)))
            return self._send(404, b"not found\n")

        def do_POST(self):
            path = self.path.partition("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._refuse(413, "request too large")
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode("utf-8", "replace")))
            if path == "/login":
                return self._login(form)
            if path == "/launch":
                return self._launch(form)
            return self._send(404, b"not found\n")

        def _login(self, params: dict[str, str]):
            try:
                location, state = login_redirect(config, params, states)
            except LtiError as e:
                return self._refuse(400, str(e))
            cookie = f"{COOKIE}={state}; Path=/; HttpOnly; SameSite=None" + ("; Secure" if secure else "")
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _launch(self, form: dict[str, str]):
            state = form.get("state", "")
            jar = SimpleCookie(self.headers.get("Cookie", ""))
            if COOKIE not in jar or jar[COOKIE].value != state:
                return self._refuse(401, "launch refused: this browser did not start this login")
            try:
                launch = verifier.launch(form.get("id_token", ""), state, states)
            except LtiError as e:
                return self._refuse(401, str(e))
            lines = [f"Launched as {launch.name or launch.user} in {launch.context_title or launch.context}."]
            if launch.instructor and launch.lineitems:
                record_context(config, launch)
                lines.append(f"Grades for this course: autograder export lti-scores --config CONFIG "
                             f"--context {launch.context} --assignment SET --grades out/SET/grades.csv")
            self._send(200, render("lti_launch.html.j2", lines=lines).encode(), "text/html; charset=utf-8")

        def _refuse(self, code: int, why: str):
            print(f"autograder lti: {why}", file=sys.stderr, flush=True)
            self._send(code, (why + "\n").encode())

        def _send(self, code: int, body: bytes, kind: str = "text/plain; charset=utf-8"):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass  # refusals are said on standard error, one line each; no request log

    host, _, port = config.listen.rpartition(":")
    server = ThreadingHTTPServer((host or "127.0.0.1", int(port or 0)), Tool)
    bound = f"http://{server.server_address[0]}:{server.server_address[1]}"
    print(f"autograder lti: listening on {bound} for {config.url} (/login, /launch, /jwks.json)", flush=True)
    if ready:
        ready(server)
    try:
        server.serve_forever()
    finally:
        server.server_close()
