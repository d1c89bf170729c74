import json, http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def _send(self, code, obj):
        b=json.dumps(obj).encode(); self.send_response(code); self.send_header('Content-Type','application/json'); self.send_header('Content-Length',str(len(b))); self.end_headers(); self.wfile.write(b)
    def handle_one(self):
        n=int(self.headers.get('Content-Length') or 0); body=self.rfile.read(n) if n else b''
        sys.stderr.write(f"REQ {self.command} {self.path} {body[:300]!r}\n")
        p=self.path.split('?')[0]
        if p=='/': return self._send(200,{"couchdb":"Welcome","version":"3.3.3","uuid":"0123456789abcdef0123456789abcdef"})
        if p=='/db' or p=='/db/': return self._send(200,{"db_name":"db","update_seq":0,"instance_start_time":"0","doc_count":0,"doc_del_count":0})
        if '/_local/' in p:
            if self.command=='GET': return self._send(404,{"error":"not_found","reason":"missing"})
            return self._send(201,{"ok":True,"id":p.split('/db/')[1],"rev":"0-1"})
        if p.endswith('/_revs_diff'): 
            req=json.loads(body); return self._send(200,{k:{"missing":v} for k,v in req.items()})
        if p.endswith('/_bulk_docs'):
            req=json.loads(body); return self._send(201,[{"ok":True,"id":d["_id"],"rev":d["_rev"]} for d in req["docs"]])
        if p.endswith('/_ensure_full_commit'): return self._send(201,{"ok":True,"instance_start_time":"0"})
        if p.endswith('/_changes'): return self._send(200,{"results":[],"last_seq":0})
        return self._send(404,{"error":"not_found","reason":"missing"})
    do_GET=do_PUT=do_POST=do_HEAD=do_DELETE=handle_one
http.server.ThreadingHTTPServer(('127.0.0.1',int(sys.argv[1])),H).serve_forever()
