"""A small Slack on 127.0.0.1 for tests and benches: the Web API methods prdigest calls, response_url, faults,
and installing the app in several workspaces.

It answers auth.test, chat.postMessage, chat.update, chat.delete, chat.unfurl, conversations.history,
conversations.replies (with message metadata), conversations.open (a person's
direct messages), reactions.add, views.publish (checked as Slack checks a Home
tab), views.open and apps.connections.open (when a Socket Mode server is
attached) the way Slack does, records every call, and can answer a method with 429 + Retry-After, an
HTTP error or a Slack error ({"ok": false, "error": ...}). A fault may also
come after the message was accepted: an HTTP error, a dropped connection, or
no answer at all until the test ends (so a poster can be killed right there).
A test may delete a message (`delete`), as a person can: updating it then fails as in Slack.
Each token acts in its own workspace (team): BOT_TOKEN in TEAM, and every token an install gives in the team
installed. A workspace installs the app through the authorize page (GET /oauth/v2/authorize, which redirects to
the app's redirect URL with a code and the state) and oauth.v2.access, which exchanges the code, once, for the
team's bot token (and, with token rotation on, a refresh token, which oauth.v2.access exchanges for a new
token). A call with a team's token sees and changes only that team's messages and Home tabs; `uninstall`
revokes a team's tokens, as Slack does before it sends app_uninstalled.
It also builds the requests Slack sends to an app, signed over HTTP or as Socket Mode payloads:
slash commands, events (mentions, link_shared), button clicks, modal submissions and message shortcuts.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlencode

from slack_sdk.signature import SignatureVerifier

from servers.loopback import LoopbackServer

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
SIGNING_SECRET = "test-signing-secret"
BOT_USER = "UPRDIGEST"
USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
TEAM = "T0TEST"
CLIENT_ID = "1111.2222"
CLIENT_SECRET = "test-client-secret"
APP_ID = "A0PRDIGEST"


def dm_channel(user: str) -> str:
    """The channel of the bot's direct messages with `user`, as the fake opens it."""
    return "D" + user[1:]


@dataclass
class ApiCall:
    method: str  # e.g. "chat.postMessage", or "response_url"
    params: dict[str, Any]
    token: str | None = None
    at: float = 0.0  # time.monotonic() when it arrived
    hook: str | None = None  # for response_url calls: the name given to response_url()
    ok: bool = True  # False when a fault or a Slack error answered it
    team: str | None = None  # the workspace the token acts in


@dataclass
class Token:
    team: str
    expires_at: float | None = None  # with token rotation: when it stops working
    revoked: bool = False

    def works(self) -> bool:
        return not self.revoked and (self.expires_at is None or time.time() < self.expires_at)


@dataclass
class Fault:
    status: int = 429
    headers: dict[str, str] = field(default_factory=lambda: {"Retry-After": "1"})
    error: str | None = None  # with status 200: Slack's {"ok": false, "error": error}
    accept: bool = False  # carry the call out first, then answer with the fault
    drop: bool = False  # close the connection without answering
    hang: bool = False  # answer nothing until the server closes
    gate: threading.Event | None = None  # answer nothing until the test sets it, then answer as if no fault


class FakeSlack(LoopbackServer):
    """The fake service; use as a context manager. `api_url` is the Web API base, `response_url()` makes hooks."""

    def __init__(self, bot_token: str = BOT_TOKEN) -> None:
        self.bot_token = bot_token  # TEAM's bot token, as a workspace's admin installs the app for one workspace
        self.tokens: dict[str, Token] = {bot_token: Token(TEAM)}  # every bot token -> the workspace it acts in
        self.redirect_url: str | None = None  # the app's redirect URL (OAuth & Permissions), set by a test
        self.rotation: float | None = None  # seconds a token lives when the app rotates tokens (None: it does not)
        self._codes: dict[str, tuple[str, str, str]] = {}  # code the authorize page gave -> (team, installer, scopes)
        self._refresh: dict[str, str] = {}  # refresh token -> team
        self._issued = itertools.count(1)
        self.scopes: list[str] | None = None  # the tokens' scopes, sent as x-oauth-scopes as Slack does; None: none sent
        self.calls: list[ApiCall] = []
        self.socket_url: str | None = None  # apps.connections.open answers this when set
        self._faults: dict[str, list[Fault]] = {}
        self._held: dict[str, threading.Event] = {}  # response_url hook -> set when its calls may go through
        self.messages: dict[str, list[dict[str, Any]]] = {}  # channel -> messages in the order posted
        self.views: dict[tuple[str, str], dict[str, Any]] = {}  # (team, user) -> the Home tab last published to them
        self._last_ts = 0.0
        self._changed = threading.Condition()
        self._closing = threading.Event()
        super().__init__(_handler(self))

    # -- setup

    @property
    def base(self) -> str:
        return self.origin

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    def response_url(self, name: str = "hook") -> str:
        return f"{self.base}/respond/{name}"

    def fail(self, method: str, *faults: Fault | None) -> None:
        """Answer the next calls of `method` with these faults in order (None: normally), then normally again.
        `response_url:HOOK` names what is sent to response_url(HOOK)."""
        with self._changed:
            self._faults.setdefault(method, []).extend(faults)

    def hold(self, hook: str) -> threading.Event:
        """Keep what the app sends to response_url(hook) waiting, unrecorded, until the returned event is set:
        a test can then tell what happened before the answer was delivered without guessing how long it takes."""
        release = threading.Event()
        with self._changed:
            self._held[hook] = release
        return release

    def _wait_if_held(self, hook: str) -> None:
        with self._changed:
            release = self._held.get(hook)
        if release is not None:
            release.wait(120)  # a test that forgot to set it still ends

    def delete(self, channel: str, ts: str) -> None:
        """A person deletes a message: it leaves the channel, and chat.update of it fails."""
        self._delete({"channel": channel, "ts": ts})

    def uninstall(self, team: str) -> None:
        """The workspace removes the app: Slack revokes its tokens (and then sends app_uninstalled)."""
        with self._changed:
            for token in self.tokens.values():
                if token.team == team:
                    token.revoked = True

    def view(self, user: str, team: str = TEAM) -> dict[str, Any]:
        """The Home tab last published to `user` of `team`."""
        with self._changed:
            return self.views[team, user]

    def reset(self) -> None:
        with self._changed:
            self.calls.clear()
            self._faults.clear()
            self.messages.clear()
            for release in self._held.values():
                release.set()
            self._held.clear()

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        for release in list(self._held.values()):
            release.set()
        super().__exit__(*exc)

    # -- what was received

    def calls_to(self, method: str) -> list[ApiCall]:
        with self._changed:
            return [call for call in self.calls if call.method == method]

    def responses(self, hook: str) -> list[ApiCall]:
        """What the app sent to response_url(hook)."""
        return [call for call in self.calls_to("response_url") if call.hook == hook]

    def posts(self, channel: str | None = None, team: str | None = None) -> list[ApiCall]:
        """Every chat.postMessage received (with a token of `team`, when given), refused ones included."""
        return [c for c in self.calls_to("chat.postMessage")
                if (channel is None or c.params.get("channel") == channel) and team in (None, c.team)]

    def delivered(self, channel: str | None = None, team: str | None = None) -> list[ApiCall]:
        """The chat.postMessage calls Slack accepted: what people see in the channel."""
        return [call for call in self.posts(channel, team) if call.ok]

    def thread(self, channel: str, team: str | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """What the channel (of `team`, when given) shows: its top-level messages, and every reply in a thread."""
        with self._changed:
            held = [m for m in self.messages.get(channel, []) if team in (None, m["team"])]
        return [m for m in held if "thread_ts" not in m], [m for m in held if "thread_ts" in m]

    def wait_for(self, predicate: Callable[[FakeSlack], bool], timeout: float = 30.0) -> None:
        """Block until predicate(self) holds; AssertionError naming what arrived if it never does."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(c.method, c.params.get("text", "")[:60]) for c in self.calls]
                    raise AssertionError(f"timed out; calls so far: {seen}")
                self._changed.wait(left)

    # -- answering

    def _record(self, call: ApiCall) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    def _next_fault(self, method: str) -> Fault | None:
        with self._changed:
            queue = self._faults.get(method)
            return queue.pop(0) if queue else None

    def _next_ts(self) -> str:
        """Unique and increasing, on the clock like Slack's, so history can be read by time."""
        with self._changed:
            self._last_ts = max(time.time(), self._last_ts + 0.000001)
            return f"{self._last_ts:.6f}"

    def _post(self, params: dict[str, Any], team: str) -> dict[str, Any]:
        ts = self._next_ts()
        message = {"type": "message", "text": params.get("text", ""), "ts": ts, "user": BOT_USER, "team": team}
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        if params.get("metadata"):
            meta = params["metadata"]
            message["metadata"] = json.loads(meta) if isinstance(meta, str) else meta
        with self._changed:
            self.messages.setdefault(params.get("channel", ""), []).append(message)
        return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": message}

    def _update(self, params: dict[str, Any], team: str) -> dict[str, Any]:
        """chat.update of a message the team's channel holds: not one deleted, nor one of another workspace."""
        channel, ts = params.get("channel", ""), params.get("ts")
        with self._changed:
            held = any(m["ts"] == ts and m["team"] == team for m in self.messages.get(channel, []))
        if not held:
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": channel, "ts": ts, "text": params.get("text")}

    def _delete(self, params: dict[str, Any], team: str | None = None) -> dict[str, Any]:
        channel = params.get("channel", "")
        with self._changed:
            held = self.messages.get(channel, [])
            kept = [m for m in held if m["ts"] != params.get("ts") or team not in (None, m["team"])]
            self.messages[channel] = kept
        if len(kept) == len(held):
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": channel, "ts": params.get("ts")}

    def _read(self, method: str, params: dict[str, Any], team: str) -> dict[str, Any]:
        """conversations.history (newest first) or conversations.replies (parent, then replies), of the team's channel."""
        with self._changed:
            held = [m for m in self.messages.get(params.get("channel", ""), []) if m["team"] == team]
        if method == "conversations.history":
            low, high = float(params.get("oldest") or 0), float(params.get("latest") or "inf")
            found = [m for m in reversed(held) if "thread_ts" not in m and low <= float(m["ts"]) <= high]
        else:
            parent = params.get("ts")
            found = [m for m in held if m["ts"] == parent or m.get("thread_ts") == parent]
        if str(params.get("include_all_metadata")).lower() not in ("true", "1"):
            found = [{k: v for k, v in m.items() if k != "metadata"} for m in found]
        return {"ok": True, "messages": found, "has_more": False}

    def _open(self, params: dict[str, Any]) -> dict[str, Any]:
        """A person's direct-message channel: the same one every time, D… for U…."""
        users = str(params.get("users") or "")
        if not USER_ID.fullmatch(users):
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "channel": {"id": dm_channel(users)}}

    def _publish(self, params: dict[str, Any], team: str) -> dict[str, Any]:
        """A Home tab, refused as Slack refuses one it cannot show."""
        view = params.get("view")
        view = json.loads(view) if isinstance(view, str) else view
        user = params.get("user_id")
        problems = view_problems(view) if isinstance(user, str) and user else ["no user_id"]
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        with self._changed:
            self.views[team, user] = view
        return {"ok": True, "view": {**view, "id": f"V{user}", "hash": f"{time.time():.6f}"}}

    def home_action(self, user: str, action_id: str, *chosen: str, block_id: str | None = None,
                    typed: str | None = None, team: str = TEAM) -> dict[str, Any]:
        """The block_actions payload of `user` of `team` using a control on the Home tab last published to them:
        choosing options of a select (by value: only ones it lists), typing into an input, or clicking a button."""
        view = self.view(user, team)
        for block in view["blocks"]:
            if block_id is not None and block.get("block_id") != block_id:
                continue
            for element in [*block.get("elements", []), *(block[key] for key in ("accessory", "element") if key in block)]:
                if element.get("action_id") != action_id:
                    continue
                action = {"type": element["type"], "action_id": action_id, "block_id": block.get("block_id", "sLaCk"),
                          "action_ts": f"{time.time():.6f}"}
                listed = {o["value"]: o for o in [*element.get("options", []),
                                                   *(o for g in element.get("option_groups", []) for o in g["options"])]}
                if element["type"] == "static_select":
                    action["selected_option"] = listed[chosen[0]]
                elif element["type"] == "multi_static_select":
                    action["selected_options"] = [listed[value] for value in chosen]
                elif element["type"] == "plain_text_input":
                    action["value"] = typed
                else:
                    action["value"] = element["value"]
                return home_action_payload(user, action, team)
        raise AssertionError(f"the Home tab of {user} has no {action_id} in {block_id or 'any block'}")

    def team_of(self, token: str | None) -> str | None:
        """The workspace a token acts in; None for a token Slack does not take (unknown, revoked or expired)."""
        with self._changed:
            found = self.tokens.get(token or "")
            return found.team if found is not None and found.works() else None

    # -- installing the app

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], str]:
        """The authorize page, as a person who clicked Add to Slack and chose Allow: a redirect to the app's
        redirect URL with a code and the state given, or an error page. `team` picks the workspace."""
        redirect = query.get("redirect_uri") or self.redirect_url
        if query.get("client_id") != CLIENT_ID or not redirect or redirect != (self.redirect_url or redirect):
            return 400, {}, "bad_client_id or bad_redirect_uri"
        code = f"code-{next(self._issued)}"
        with self._changed:
            self._codes[code] = (query.get("team") or TEAM, query.get("user") or "U0INSTALLER", query.get("scope", ""))
        return 302, {"Location": f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}"}, ""

    def _access(self, params: dict[str, Any], client: tuple[str, str] | None) -> dict[str, Any]:
        """oauth.v2.access: the app's credentials (HTTP Basic or form), and a code once, or a refresh token."""
        given = client or (params.get("client_id"), params.get("client_secret"))
        if given != (CLIENT_ID, CLIENT_SECRET):
            return {"ok": False, "error": "invalid_client_id"}
        with self._changed:
            if params.get("grant_type") == "refresh_token":
                team = self._refresh.pop(str(params.get("refresh_token")), None)
                if team is None:
                    return {"ok": False, "error": "invalid_refresh_token"}
                return {"ok": True, "token_type": "bot", **self._grant(team)}
            found = self._codes.pop(str(params.get("code")), None)
            if found is None:
                return {"ok": False, "error": "invalid_code"}
            team, user, scopes = found
        return {"ok": True, "app_id": APP_ID, "authed_user": {"id": user}, "scope": scopes,
                "token_type": "bot", "bot_user_id": BOT_USER, "team": {"id": team, "name": f"Workspace {team}"},
                "enterprise": None, "is_enterprise_install": False, **self._grant(team)}

    def _grant(self, team: str) -> dict[str, Any]:
        token = f"xoxb-{team}-{next(self._issued)}"
        granted: dict[str, Any] = {"access_token": token}
        with self._changed:
            self.tokens[token] = Token(team, None if self.rotation is None else time.time() + self.rotation)
            if self.rotation is not None:
                refresh = f"xoxe-1-{team}-{next(self._issued)}"
                self._refresh[refresh] = team
                granted |= {"refresh_token": refresh, "expires_in": int(self.rotation)}
        return granted

    def answer(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        if method == "apps.connections.open":
            if token != APP_TOKEN or not self.socket_url:
                return {"ok": False, "error": "invalid_auth"}
            return {"ok": True, "url": self.socket_url}
        team = self.team_of(token)
        if team is None:
            return {"ok": False, "error": "invalid_auth"}
        if method.startswith("chat."):
            return self._chat(method, params, team)
        if method.startswith("conversations."):
            return self._conversations(method, params, team)
        if method.startswith("views."):
            return self._views(method, params, team)
        if method == "auth.test":
            return {"ok": True, "url": f"https://{team.lower()}.slack.com/", "team": f"Workspace {team}", "user": "prdigest",
                    "team_id": team, "user_id": BOT_USER, "bot_id": "BPRDIGEST"}
        if method == "reactions.add":
            return {"ok": True}
        return _unknown_method()

    def _chat(self, method: str, params: dict[str, Any], team: str) -> dict[str, Any]:
        if method == "chat.postMessage":
            return self._post(params, team)
        if method == "chat.update":
            return self._update(params, team)
        if method == "chat.unfurl":
            return _unfurl(params)
        if method == "chat.delete":
            return self._delete(params, team)
        return _unknown_method()

    def _conversations(self, method: str, params: dict[str, Any], team: str) -> dict[str, Any]:
        if method in ("conversations.history", "conversations.replies"):
            return self._read(method, params, team)
        if method == "conversations.open":
            return self._open(params)
        return _unknown_method()

    def _views(self, method: str, params: dict[str, Any], team: str) -> dict[str, Any]:
        if method == "views.publish":
            return self._publish(params, team)
        if method == "views.open":
            return _view_opened(params)
        return _unknown_method()


def _unknown_method() -> dict[str, Any]:
    return {"ok": False, "error": "unknown_method"}


def _blocks_problem(blocks: Any, most: int) -> str | None:
    """Slack's answer to blocks it will not show: not a list of typed objects, or too many."""
    if not isinstance(blocks, list) or not all(isinstance(block, dict) and "type" in block for block in blocks):
        return "invalid_blocks"
    return "invalid_blocks" if len(blocks) > most else None


def _unfurl(params: dict[str, Any]) -> dict[str, Any]:
    """chat.unfurl: a channel and ts (or unfurl_id and source), and unfurls mapping each URL to blocks."""
    unfurls = params.get("unfurls")
    unfurls = json.loads(unfurls) if isinstance(unfurls, str) else unfurls
    if not (params.get("channel") and params.get("ts")) and not (params.get("unfurl_id") and params.get("source")):
        return {"ok": False, "error": "invalid_arguments"}
    if not isinstance(unfurls, dict) or not unfurls:
        return {"ok": False, "error": "invalid_unfurls_format"}
    problems = [_blocks_problem((value or {}).get("blocks"), 50) if isinstance(value, dict) else "invalid_unfurls_format"
                for value in unfurls.values()]
    problem = next((problem for problem in problems if problem), None)
    return {"ok": False, "error": problem} if problem else {"ok": True}


def _view_opened(params: dict[str, Any]) -> dict[str, Any]:
    """views.open: a trigger_id, and a modal with a title, at most 100 blocks and private_metadata of 3,000 characters."""
    view = params.get("view")
    view = json.loads(view) if isinstance(view, str) else view
    if not params.get("trigger_id"):
        return {"ok": False, "error": "invalid_trigger_id"}
    if not isinstance(view, dict) or view.get("type") != "modal" or not view.get("title"):
        return {"ok": False, "error": "invalid_arguments"}
    if _blocks_problem(view.get("blocks"), 100) or len(view.get("private_metadata", "")) > 3000:
        return {"ok": False, "error": "invalid_arguments"}
    return {"ok": True, "view": {**view, "id": "V0MODAL", "state": {"values": {}}}}


def _handler(slack: FakeSlack) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"slack": slack})


class _Handler(BaseHTTPRequestHandler):
    slack: FakeSlack

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # slack_sdk reads conversations.* with GET and a query string
        path, _, query = self.path.partition("?")
        params = dict(parse_qsl(query, keep_blank_values=True))
        if path == "/oauth/v2/authorize":  # a person's browser, on the Add to Slack link
            return self._authorize(params)
        self._api(path, params)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
        params = _params(raw, self.headers.get("Content-Type", ""))
        self._api(self.path, params)

    def _authorize(self, params: dict[str, str]) -> None:
        slack = self.slack
        status, headers, body = slack.authorize(params)
        slack._record(ApiCall("authorize", params, at=time.monotonic(), ok=status == 302, team=params.get("team")))
        self._send(status, body, "text/plain", headers)

    def _client(self) -> tuple[str, str] | None:
        """The app's client ID and secret, as slack_sdk sends them to oauth.v2.access: HTTP Basic."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return None
        client_id, _, secret = base64.b64decode(auth[len("Basic "):]).decode().partition(":")
        return client_id, secret

    def _api(self, path: str, params: dict[str, Any]) -> None:
        slack = self.slack
        if path.startswith("/respond/"):
            return self._respond(path[len("/respond/"):], params)
        if not path.startswith("/api/"):
            return self._send(404, "not found", "text/plain")
        method = path[len("/api/"):].split("?")[0]
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else params.get("token")
        fault = slack._next_fault(method)
        if fault and fault.gate is not None:
            fault.gate.wait(120)  # a test that forgot to set it still ends
            fault = None
        call = ApiCall(method, params, token, time.monotonic(), ok=fault is None, team=slack.team_of(token))
        if fault:
            return self._fault(fault, call)
        if method == "oauth.v2.access":
            answer = slack._access(params, self._client())
            call.team = answer.get("team", {}).get("id") if answer["ok"] else None
        else:
            answer = slack.answer(method, params, token)
        call.ok = answer["ok"]
        slack._record(call)
        granted = {"x-oauth-scopes": ",".join(slack.scopes)} if slack.scopes is not None and answer["ok"] else {}
        self._send(200, json.dumps(answer), headers=granted)

    def _respond(self, hook: str, params: dict[str, Any]) -> None:
        slack = self.slack
        slack._wait_if_held(hook)
        fault = slack._next_fault(f"response_url:{hook}")
        slack._record(ApiCall("response_url", params, at=time.monotonic(), hook=hook, ok=fault is None))
        if fault:  # Slack answers a response_url it will not take with a status and a word
            return self._send(fault.status, fault.error or "expired_url", "text/plain")
        return self._send(200, "ok", "text/plain")

    def _fault(self, fault: Fault, call: ApiCall) -> None:
        """Answer a call with the fault injected for it: accepted and then lost, an error, or a failing status."""
        slack = self.slack
        if fault.accept:
            call.ok = slack.answer(call.method, call.params, call.token)["ok"]
            slack._record(call)
            if fault.hang:
                slack._closing.wait()
            if fault.drop or fault.hang:
                self.close_connection = True
                return None
            return self._send(fault.status, json.dumps({"ok": False}))
        slack._record(call)
        if fault.error:
            return self._send(200, json.dumps({"ok": False, "error": fault.error}))
        body = {"ok": False, "error": "ratelimited"} if fault.status == 429 else {"ok": False}
        return self._send(fault.status, json.dumps(body), headers=fault.headers)

    def _send(self, status: int, body: str, kind: str = "application/json", headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _params(raw: str, content_type: str) -> dict[str, Any]:
    if "json" in content_type:
        return json.loads(raw or "{}")
    params: dict[str, Any] = dict(parse_qsl(raw, keep_blank_values=True))
    for key in ("blocks", "view"):  # slack_sdk sends these JSON-encoded inside a form
        if isinstance(params.get(key), str):
            params[key] = json.loads(params[key])
    return params


# ---------------------------------------------------------------- requests Slack sends to the app

def signed_headers(body: str, content_type: str, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body),
    }


def slash_payload(text: str, response_url: str, channel: str = "C0REPORTS", user: str = "U0ALICE",
                  team: str = TEAM) -> dict[str, str]:
    """`/prdigest TEXT` as Slack describes it (form fields over HTTP, a dict in Socket Mode), typed in `team`."""
    return {
        "token": "legacy", "team_id": team, "team_domain": "test", "channel_id": channel, "channel_name": "reports",
        "user_id": user, "user_name": "alice", "command": "/prdigest", "text": text, "api_app_id": "A0PRDIGEST",
        "response_url": response_url, "trigger_id": "1.2.3",
    }


def mention_payload(text: str, ts: str, channel: str = "C0REPORTS", thread_ts: str | None = None, user: str = "U0ALICE",
                    team: str = TEAM) -> dict[str, Any]:
    """An event_callback carrying an app_mention in `team`."""
    event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return {
        "token": "legacy", "team_id": team, "api_app_id": "A0PRDIGEST", "type": "event_callback",
        "event_id": f"Ev{ts.replace('.', '')}", "event_time": int(time.time()), "event": event,
        "authorizations": [{"team_id": team, "user_id": BOT_USER, "is_bot": True}],
    }


def click_payload(action_id: str, value: str, response_url: str, channel: str = "C0REPORTS", user: str = "U0ALICE",
                  team: str = TEAM) -> dict[str, Any]:
    """A block_actions payload: a click on a button in a message of `team`."""
    return {
        "type": "block_actions", "team": {"id": team}, "user": {"id": user}, "api_app_id": "A0PRDIGEST",
        "token": "legacy", "container": {"type": "message", "channel_id": channel, "message_ts": "1700000000.000001"},
        "trigger_id": "1.2.3", "channel": {"id": channel}, "response_url": response_url,
        "actions": [{"type": "button", "action_id": action_id, "block_id": "b1", "value": value,
                     "action_ts": str(time.time())}],
    }


def link_shared_payload(urls: list[str], message_ts: str, channel: str = "C0REPORTS", user: str = "U0ALICE",
                        source: str = "conversations_history") -> dict[str, Any]:
    """An event_callback carrying link_shared: a message linking `urls` (of the app's unfurl domains)."""
    event = {"type": "link_shared", "channel": channel, "is_bot_user_member": True, "user": user,
             "message_ts": message_ts, "unfurl_id": f"{channel}.{message_ts}.unfurl", "source": source,
             "event_ts": message_ts, "links": [{"domain": url.split("/")[2], "url": url} for url in urls]}
    if source == "composer":
        event["channel"], event["message_ts"] = "COMPOSER", f"{user}-draft"
    return {"token": "legacy", "team_id": TEAM, "api_app_id": "A0PRDIGEST", "type": "event_callback",
            "event_id": f"EvL{message_ts.replace('.', '')}{len(urls)}", "event_time": int(time.time()), "event": event,
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}


def submission_payload(view: dict[str, Any], values: dict[str, str | None], user: str = "U0ALICE",
                       team: str = TEAM) -> dict[str, Any]:
    """A view_submission: `view` as the app opened it, with each input block's one input answered."""
    state = {block["block_id"]: {block["element"]["action_id"]: {"type": "plain_text_input", "value": values.get(block["block_id"])}}
             for block in view["blocks"] if block["type"] == "input"}
    return {"type": "view_submission", "team": {"id": team}, "user": {"id": user, "team_id": team}, "api_app_id": "A0PRDIGEST",
            "token": "legacy", "trigger_id": "4.5.6",
            "view": {**view, "id": "V0MODAL", "team_id": team, "state": {"values": state}, "hash": "1.abc"}}


def shortcut_payload(callback_id: str, text: str, ts: str, response_url: str, channel: str = "C0REPORTS",
                     thread_ts: str | None = None, user: str = "U0ALICE") -> dict[str, Any]:
    """A message_action: a message shortcut chosen on a message."""
    message = {"type": "message", "user": "U0BOB", "text": text, "ts": ts}
    if thread_ts:
        message["thread_ts"] = thread_ts
    return {"type": "message_action", "callback_id": callback_id, "team": {"id": TEAM}, "user": {"id": user},
            "channel": {"id": channel, "name": "reports"}, "message": message, "message_ts": ts,
            "trigger_id": "7.8.9", "response_url": response_url, "token": "legacy", "action_ts": str(time.time())}


FORM, JSON = "application/x-www-form-urlencoded", "application/json"


def interactive(payload: dict[str, Any]) -> tuple[str, str]:
    """The HTTP body and content type of an interaction (a click, a modal submitted, a shortcut)."""
    return urlencode({"payload": json.dumps(payload)}), FORM


def slash_command(text: str, response_url: str, **where: str) -> tuple[str, str]:
    """The HTTP body and content type of `/prdigest TEXT`."""
    return urlencode(slash_payload(text, response_url, **where)), FORM


def mention_event(text: str, ts: str, **where: Any) -> tuple[str, str]:
    return json.dumps(mention_payload(text, ts, **where)), JSON


def home_opened(event_id: str, user: str = "U0ALICE", team: str = TEAM) -> tuple[str, str]:
    """An event_callback carrying app_home_opened for the Home tab."""
    return json.dumps({
        "type": "event_callback", "team_id": team, "api_app_id": "A0PRDIGEST", "event_id": event_id,
        "event_time": int(time.time()),
        "event": {"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home"},
    }), JSON


def home_opened_payload(event_id: str, user: str = "U0ALICE") -> dict[str, Any]:
    return json.loads(home_opened(event_id, user)[0])


def home_action_payload(user: str, action: dict[str, Any], team: str = TEAM) -> dict[str, Any]:
    """A block_actions payload from a control on the Home tab: its container is the view, and it has no response_url."""
    return {
        "type": "block_actions", "team": {"id": team}, "user": {"id": user, "username": user.lower(), "team_id": team},
        "api_app_id": "A0PRDIGEST", "token": "legacy", "trigger_id": "1.2.3",
        "container": {"type": "view", "view_id": f"V{user}"},
        "view": {"id": f"V{user}", "type": "home", "hash": "1.2", "blocks": [], "state": {"values": {}}},
        "actions": [action],
    }


def lifecycle_event(kind: str, team: str, event_id: str) -> tuple[str, str]:
    """What Slack sends when `team` removes the app (app_uninstalled) or its bot token is revoked (tokens_revoked)."""
    event: dict[str, Any] = {"type": kind, "event_ts": f"{time.time():.6f}"}
    if kind == "tokens_revoked":
        event["tokens"] = {"oauth": [], "bot": [BOT_USER]}
    return json.dumps({"token": "legacy", "team_id": team, "api_app_id": APP_ID, "type": "event_callback",
                       "event_id": event_id, "event_time": int(time.time()), "event": event}), JSON


def form(payload: dict[str, Any]) -> tuple[str, str]:
    """An interaction payload as Slack sends it over HTTP."""
    return urlencode({"payload": json.dumps(payload)}), FORM


# Slack's limits on a Home tab, as views.publish enforces them.
_MAX_HOME_BLOCKS, _MAX_TEXT, _MAX_OPTIONS, _MAX_OPTION_TEXT, _MAX_VALUE, _MAX_ELEMENTS = 100, 3000, 100, 75, 150, 25


def view_problems(view: object) -> list[str]:
    """What makes Slack refuse a Home tab view (none: it is shown)."""
    if not isinstance(view, dict) or view.get("type") != "home" or not isinstance(view.get("blocks"), list):
        return ["a view of type home with blocks"]
    blocks, problems = view["blocks"], []
    if len(blocks) > _MAX_HOME_BLOCKS:
        problems.append(f"{len(blocks)} blocks, more than {_MAX_HOME_BLOCKS}")
    ids = [block["block_id"] for block in blocks if "block_id" in block]
    if len(ids) != len(set(ids)):
        problems.append("block_ids not unique")
    for block in blocks:
        text = (block.get("text") or {}).get("text", "")
        if len(text) > _MAX_TEXT or len(block.get("block_id", "")) > 255:
            problems.append(f"a {block.get('type')} block's text or block_id is too long")
        elements = [*block.get("elements", []), *(block[key] for key in ("accessory", "element") if key in block)]
        if len(elements) > _MAX_ELEMENTS:
            problems.append("an actions block of more than 25 elements")
        actions = [element.get("action_id") for element in elements if element.get("action_id")]
        if len(actions) != len(set(actions)):
            problems.append("action_ids not unique in a block")
        if block.get("type") == "input" and not (block.get("label") and block.get("element")):
            problems.append("an input without its label or element")
        problems += [problem for element in elements for problem in _element_problems(element)]
    return problems


def _element_problems(element: dict[str, Any]) -> list[str]:
    options = [*element.get("options", []), *(o for g in element.get("option_groups", []) for o in g["options"])]
    problems = []
    if len(options) > _MAX_OPTIONS:
        problems.append(f"{element.get('type')} of {len(options)} options")
    if any(len(o["text"]["text"]) > _MAX_OPTION_TEXT or len(o["value"]) > _MAX_VALUE for o in options):
        problems.append("an option's text or value is too long")
    values = {o["value"] for o in options}
    initial = [element["initial_option"]] if "initial_option" in element else element.get("initial_options", [])
    if "initial_options" in element and not initial:
        problems.append("empty initial_options")
    if any(o.get("value") not in values for o in initial):
        problems.append("an initial option that is not among the options")
    if element.get("type") == "button" and (len(element.get("value", "")) > 2000 or len(element["text"]["text"]) > 75):
        problems.append("a button's value or text is too long")
    return problems


def button_click(action_id: str, value: str, response_url: str, **where: str) -> tuple[str, str]:
    return interactive(click_payload(action_id, value, response_url, **where))


def signed_raw(body: bytes, content_type: str, timestamp: str | None = None) -> dict[str, str]:
    """Slack's signature over raw bytes, which need not be text."""
    stamp = timestamp or str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


_EVENT = {"type": "event_callback", "team_id": "T0TEST", "api_app_id": "A0PRDIGEST", "event_id": "EvFUZZ"}
# Bodies no listener can use, each worth a 4xx and one log line whether signed or not.
MALFORMED = [
    (b"{not json", JSON), (b"[1, 2]", JSON), (b'"text"', JSON), (b"null", JSON), (b"", JSON),
    (b"\xff\xfe\x00garbage", JSON), (b"\xff\xfe\x00garbage", FORM), (b"payload=not-json", FORM),
    (b"payload=%5B1%5D", FORM), (b"payload=", FORM), (b"command=%2Fprdigest&text=today", FORM),
    (b"{\"type\": 7}", JSON), (json.dumps({**_EVENT}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_mention", "text": "<@UPRDIGEST> hi"}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_mention", "channel": "C1", "ts": 5, "text": 9}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_home_opened", "tab": "home"}}).encode(), JSON),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": [{"action_id": "prdigest_pr_summary",
                                                                    "value": 42}]}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": "none"}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": [{"action_id": "prdigest_pr_summary",
                                                                    "value": "acme/engine#4102"}]}).encode(), FORM),
    (b"[" * 3000 + b"]" * 3000, JSON), (b'{"a":' * 3000 + b"1" + b"}" * 3000, JSON),
    (json.dumps({**_EVENT, "event": "app_home_opened"}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_home_opened", "tab": "home", "user": {"id": "U1"}}}).encode(), JSON),
    (json.dumps({**_EVENT, "authorizations": "all", "event": {"type": "app_home_opened", "user": "U1"}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "reaction_added"}}).encode(), JSON),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": []}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": [{"value": "x"}]}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "team": "T1", "actions": [{"action_id": "other"}]}).encode(), FORM),
    (b"payload=" + json.dumps({**click_payload("prdigest_pr_summary", "acme/engine#4102", "x"), "response_url": 5}).encode(), FORM),
    (b"payload=" + json.dumps(click_payload("prdigest_pr_summary", f"acme/engine#{'9' * 4000}", "http://127.0.0.1:9/x")).encode(),
     FORM),
    (json.dumps({"command": "/prdigest", "text": "today", "response_url": 5, "channel_id": ["C1"]}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "link_shared", "channel": "C1", "message_ts": "1.2", "links": "x"}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "link_shared", "channel": "C1", "message_ts": 1, "links": [{"url": 7}]}}).encode(), JSON),
    (b"payload=" + json.dumps({"type": "view_submission", "user": {"id": "U1"}, "team": {"id": "T1"}, "view": {
        "callback_id": "prdigest_feedback", "private_metadata": "{", "state": {"values": {}}}}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "message_action", "callback_id": "prdigest_explain", "team": {"id": "T1"},
                               "user": {"id": "U1"}, "channel": {"id": "C1"}, "response_url": "http://127.0.0.1:9/x"}).encode(), FORM),
    (b"payload=" + json.dumps(click_payload("prdigest_share", "../../x", "http://127.0.0.1:9/x")).encode(), FORM),
    (b"payload=" + json.dumps(click_payload("prdigest_vote_up", "1e99", "http://127.0.0.1:9/x")).encode(), FORM),
]
# Header values that are not a short run of ASCII digits ("²" passes str.isdigit() and fails int()), each worth a 400.
BAD_LENGTHS = ["5e10", "9" * 5000, "9" * 20, "-1", "0x10", "\xb2"]
BAD_TIMESTAMPS = ["\xb2", "\u0661\u0662", "9" * 5000, "1" * 13, "-1", "1e9"]
