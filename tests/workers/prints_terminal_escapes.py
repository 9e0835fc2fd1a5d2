"""A task that prints what a hostile or careless program might: an OSC 52 clipboard write, a window title, a clear
screen, 8-bit C1 controls, a bidi override and a zero-width space; then exits 0. No TensorFlow, no distdoctor."""
import sys

print("clip \x1b]52;c;cm0gLXJmIH4=\x07 title \x1b]0;pwned\x07 clear \x1b[2J c1 \x9b31m bidi \u202e zw \u200b end",
      flush=True)
print(f"args {len(sys.argv) - 1}", flush=True)   # never the values: a secret must be distdoctor's to leak
