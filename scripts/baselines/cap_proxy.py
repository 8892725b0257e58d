"""A forwarding proxy for an OpenAI-compatible server that caps every chat request's reply
budget (`max_tokens` / `max_completion_tokens`) at CAP tokens, for runs against a tiny local
model that would otherwise ramble for minutes per call (SmolLM2-135M rarely stops on its own).
Everything else passes through unchanged (a streamed reply is passed on whole, once the
upstream has finished it). A test tool of scripts/baselines/real-servers.sh.

With a fourth argument `json-object`, a request for OpenAI's structured outputs
(`response_format: {"type": "json_schema", "json_schema": {"schema": S}}`) is passed on in the
form llama-cpp-python's server takes (`{"type": "json_object", "schema": S}`): that server
refuses `json_schema` (vLLM, SGLang and OpenAI take it).

Usage: python cap_proxy.py UPSTREAM_BASE (e.g. http://127.0.0.1:8000) CAP PORT_FILE [json-object]
It listens on 127.0.0.1 on a free port and writes that port to PORT_FILE.
"""

import http.server
import json
import socketserver
import sys
import urllib.error
import urllib.request

UPSTREAM, CAP, PORT_FILE = sys.argv[1].rstrip("/"), int(sys.argv[2]), sys.argv[3]
JSON_OBJECT = len(sys.argv) > 4 and sys.argv[4] == "json-object"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _forward(self, body):
        req = urllib.request.Request(UPSTREAM + self.path, data=body, method=self.command)
        for k in ("Content-Type", "Authorization"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            with urllib.request.urlopen(req, timeout=3600) as r:
                status, data, ctype = r.status, r.read(), r.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as e:
            status, data, ctype = e.code, e.read(), e.headers.get("Content-Type", "application/json")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._forward(None)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/chat/completions") or self.path.endswith("/completions"):
            try:
                j = json.loads(body)
                for key in ("max_tokens", "max_completion_tokens"):
                    if j.get(key) is None or j[key] > CAP:
                        j[key] = CAP
                j.pop("max_completion_tokens")  # max_tokens carries the cap
                rf = j.get("response_format")
                if JSON_OBJECT and isinstance(rf, dict) and rf.get("type") == "json_schema":
                    schema = (rf.get("json_schema") or {}).get("schema")
                    j["response_format"] = {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
                body = json.dumps(j).encode()
            except (ValueError, TypeError):
                pass
        self._forward(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORT_FILE, "w") as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()
