#!/usr/bin/env python3
"""Opens pages of the built documentation site in headless Chromium and fails on any console error: an uncaught
exception, console.error, or a browser-side error such as a resource that did not load (console.log and warnings
pass: the search worker logs its progress). Chromium is driven through the DevTools protocol over a pipe, which
reports each message's level. The site is served over HTTP on 127.0.0.1 for the test, as a hosted site is read:
from file:// URLs a browser refuses the search's web worker.

Usage: browser_check.py SITE_DIR PAGE...   (PAGE relative to SITE_DIR; scripts/docs.sh --check runs it)
"""
import functools
import http.server
import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT_S = 60  # per page: bounds a hung browser only; a page loads in a second
SETTLE_S = 1.0  # after the load event, for the errors of deferred work (the search worker's start)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the browser's messages are what the check reads
        pass


class DevTools:
    """A headless Chromium and its DevTools protocol over --remote-debugging-pipe (fds 3 and 4, NUL-separated)."""

    def __init__(self, profile):
        to_child, self.send_fd = os.pipe()
        self.recv_fd, from_child = os.pipe()

        def child_fds():
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=child_fds, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.buffer, self.next_id, self.events = b"", 0, []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.send_fd, json.dumps(message).encode() + b"\0")
        return self.next_id

    def receive(self, deadline):
        """The next message, or None at the deadline."""
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.recv_fd], [], [], left)[0]:
                return None
            chunk = os.read(self.recv_fd, 1 << 16)
            if not chunk:
                raise SystemExit("browser_check: chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        """Sends a command and returns its result; events received meanwhile are kept in self.events."""
        call_id = self.send(method, params, session)
        deadline = time.monotonic() + TIMEOUT_S
        while (message := self.receive(deadline)) is not None:
            if message.get("id") == call_id:
                if "error" in message:
                    raise SystemExit(f"browser_check: {method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)
        raise SystemExit(f"browser_check: no answer to {method} within {TIMEOUT_S} s")

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self.send_fd)
        os.close(self.recv_fd)


def error_text(event):
    """The message of a console error event, or None for any other event."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        return details.get("exception", {}).get("description") or details.get("text")
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
    if method == "Log.entryAdded" and params["entry"]["level"] == "error":
        return f"{params['entry']['text']} ({params['entry'].get('url', '')})"
    return None


def page_errors(browser, url):
    """The console errors of loading `url` in a new tab, and whether it rendered an <h1>."""
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page"):
        browser.call(f"{domain}.enable", session=session)
    browser.events.clear()
    browser.call("Page.navigate", {"url": url}, session)
    deadline = time.monotonic() + TIMEOUT_S
    while not any(e.get("method") == "Page.loadEventFired" for e in browser.events):
        message = browser.receive(deadline)
        if message is None:
            raise SystemExit(f"browser_check: {url} did not load within {TIMEOUT_S} s")
        browser.events.append(message)
    settle = time.monotonic() + SETTLE_S
    while (message := browser.receive(settle)) is not None:
        browser.events.append(message)
    heading = browser.call("Runtime.evaluate", {"expression": "document.querySelector('h1') !== null"}, session)
    errors = [text for e in browser.events if e.get("sessionId") == session and (text := error_text(e))]
    browser.call("Target.closeTarget", {"targetId": target})
    return errors, heading["result"].get("value") is True


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    site, pages = pathlib.Path(sys.argv[1]), sys.argv[2:]
    for page in pages:
        if not (site / page).is_file():
            raise SystemExit(f"browser_check: {site / page}: no such page (did scripts/docs.sh build the site?)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="kforge-docs-chromium-") as profile:
        browser = DevTools(profile)
        try:
            for page in pages:
                errors, has_heading = page_errors(browser, f"http://127.0.0.1:{server.server_address[1]}/{page}")
                if errors or not has_heading:
                    failed += 1
                    problems = errors + ([] if has_heading else ["the page rendered no <h1>"])
                    print(f"browser_check: {site / page}:\n  " + "\n  ".join(problems), file=sys.stderr)
        finally:
            browser.close()
            server.shutdown()
    print(f"browser check: {len(pages) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
