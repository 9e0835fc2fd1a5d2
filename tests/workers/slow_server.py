"""A slow HTTP server on loopback for the healthy 'download' scenario: it streams 16 KiB every 50 ms
(about 320 KiB/s) for ``?seconds=S``. Prints its port on the first line. Does not import distdoctor."""
import http.server
import socketserver
import sys
import time
import urllib.parse


class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        seconds = float(q.get("seconds", ["5"])[0])
        self.send_response(200)
        self.end_headers()
        end = time.time() + max(0.0, seconds)
        try:
            while time.time() < end:
                self.wfile.write(b"x" * 16384)
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Slow)
print(srv.server_address[1], flush=True)
sys.stdout.close()
srv.serve_forever()
