#!/usr/bin/env python3
"""A misbehaving OpenAI-compatible server for the reliability probes (issue 46), on
127.0.0.1 only.

    hostile_server.py MODE PORT_FILE
      zeros  POST .../embeddings answers all-zero vectors (dimension 8)
      hang   POST requests are read and never answered
      huge   POST .../chat/completions answers a 50 MB reply
GET .../models answers {"data": []} in every mode (the start-up probe).
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, body, code=200):
        b = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        try:
            self.wfile.write(b)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        self.send({"data": []})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        req = json.loads(self.rfile.read(n) or b"{}")
        if MODE == "hang":
            time.sleep(3600)
            return
        if self.path.endswith("/embeddings") and MODE == "zeros":
            texts = req.get("input") or []
            texts = [texts] if isinstance(texts, str) else texts
            self.send({"data": [{"index": i, "embedding": [0.0] * 8} for i in range(len(texts))],
                       "model": "m"})
            return
        if self.path.endswith("/chat/completions") and MODE == "huge":
            content = "INSERT " + "z" * (50 << 20)
            self.send({"choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
            return
        self.send({"error": "not served in this mode"}, 404)


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(sys.argv[2], "w") as f:
        f.write(str(srv.server_address[1]))
    srv.serve_forever()


if __name__ == "__main__":
    main()
