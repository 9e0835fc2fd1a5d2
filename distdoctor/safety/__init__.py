"""What distdoctor writes and prints is safe: secrets redacted (:mod:`.redact`), text from tasks and logs made
harmless to a terminal (:mod:`.printable`), bundle files private and never written through a planted link
(:mod:`.files`), a job's token strong enough (:mod:`.secret`). The bottom layer: imports nothing else of
distdoctor. docs/security.md says what is done where.
"""
from .files import (GuardedFile, OutLock, OutLockError, WriteLosses, ensure_private_dir, error_text, open_fresh,
                    write_fresh)
from .printable import safe_line, safe_text, slack_escape
from .redact import redact_argv, redact_text, redact_url, secret_env_name
from .secret import token_problem

__all__ = ["GuardedFile", "WriteLosses", "error_text", "OutLock", "OutLockError", "ensure_private_dir", "open_fresh",
           "write_fresh", "safe_line", "safe_text", "slack_escape", "redact_argv", "redact_text", "redact_url",
           "secret_env_name", "token_problem"]
