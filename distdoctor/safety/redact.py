"""Secrets out of everything distdoctor writes or prints. Pure.

A *secret flag* is a command-line option whose name holds key, token, secret, password, auth, credential, cookie or
session (``--api-key``, ``--hf_token``, ``--db-password``); its value is replaced by :data:`MASK`, given as
``--api-key=VALUE`` or as the next argument. A URL's ``user:password@`` keeps the user and loses the password. An
environment variable is secret when its name holds KEY, AUTH, TOKEN, SECRET, PASS, CRED, COOKIE or SESSION anywhere
(``TF_APIKEY``, ``TF_AUTH_HEADER``): such a variable is never recorded nor sent to another task.
"""
from __future__ import annotations

import re
import urllib.parse
from typing import Iterable

__all__ = ["MASK", "secret_flag", "secret_env_name", "redact_argv", "redact_text", "redact_url"]

MASK = "***"
# a flag's name (without its dashes): a secret word anywhere; "author" is no auth, "keyboard"/"monkey" no key
_FLAG_WORD = re.compile(r"(?:^|[-_.])(?:api)?keys?(?:$|[-_.])|apikey|token|secret|passw|pwd|auth(?!or)|credential"
                        r"|cookie|session", re.I)
_ENV_WORD = re.compile(r"KEY|AUTH|TOKEN|SECRET|PASS|CRED|COOKIE|SESSION", re.I)
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<user>[^\s/:@]*):(?P<pw>[^\s/@]+)@", re.I)
# in free text: --flag=value or --flag value (value: up to the next blank or quote)
_TEXT_FLAG = re.compile(r"(?P<flag>(?<![\w-])--?[A-Za-z][\w.-]*)(?P<sep>=|\s+)(?P<val>(?!-)[^\s'\"]+)")


def secret_flag(name: str) -> bool:
    """Whether a command-line option (``--api-key``, ``-token``) carries a secret."""
    return name.startswith("-") and bool(_FLAG_WORD.search(name.lstrip("-")))


def secret_env_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (KEY, AUTH, TOKEN, ... anywhere)."""
    return bool(_ENV_WORD.search(name))


def _userinfo(text: str) -> str:
    return _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)


def redact_argv(argv: Iterable[str]) -> list[str]:
    """``argv`` with every secret flag's value and every URL password masked."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        arg = str(arg)
        if hide_next and not arg.startswith("--"):
            out.append(MASK)
            hide_next = False
            continue
        hide_next = False
        name, eq, _value = arg.partition("=")
        if secret_flag(name):
            if eq:
                out.append(f"{name}={MASK}")
                continue
            hide_next = True
        out.append(_userinfo(arg))
    return out


def redact_text(text: str) -> str:
    """Free text (a command line shown as one string, an error, a log line) with secret flags' values and URL
    passwords masked."""
    if not text:
        return text
    text = _userinfo(text)
    return _TEXT_FLAG.sub(lambda m: f"{m['flag']}{m['sep']}{MASK}" if secret_flag(m["flag"]) else m[0], text)


def redact_url(url: str) -> str:
    """An alert or Alertmanager URL as it may be shown: never its password, query or fragment, and its path masked
    when a segment looks like a token (Slack's ``/services/T0../B0../XXXX``); ``/api/v2/alerts`` stays."""
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError:
        return MASK
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{u.port}" if u.port else ""
    except ValueError:
        port = ""
    user = (f"{u.username}:{MASK}@" if u.password is not None else f"{u.username}@") if u.username else ""
    path = u.path
    if u.query or u.fragment or any(_tokenlike(p) for p in path.split("/")):
        path = "/" + MASK
    return urllib.parse.urlunsplit((u.scheme, user + host + port, path, "", ""))


def _tokenlike(segment: str) -> bool:
    """A path segment that may be a credential: long, or letters and digits mixed (a webhook's T0123ABCD)."""
    return len(segment) >= 16 or (len(segment) >= 8 and any(c.isdigit() for c in segment)
                                  and any(c.isalpha() for c in segment))
