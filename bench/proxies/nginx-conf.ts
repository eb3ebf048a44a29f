/**
 * nginx as the reference reverse proxy: one worker (a fair match for single-threaded Node),
 * a keep-alive upstream pool, streaming (`proxy_buffering off`, which cost less CPU per 1 MB
 * response than buffering in trials on this class of machine), no access log. Everything it
 * writes stays in the run's temporary directory; `daemon off` keeps it a child of the runner.
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'

export function nginxConf (dir: string, port: number, upstreamPort: number): string {
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(dir, `temp-${t}`), { recursive: true })
  return `daemon off;
master_process on;
worker_processes 1;
${process.getuid?.() === 0 ? 'user root;' : ''}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/temp-body;
  proxy_temp_path ${dir}/temp-proxy;
  fastcgi_temp_path ${dir}/temp-fastcgi;
  uwsgi_temp_path ${dir}/temp-uwsgi;
  scgi_temp_path ${dir}/temp-scgi;
  keepalive_timeout 120s;
  keepalive_requests 1000000;
  upstream catalog {
    server 127.0.0.1:${upstreamPort};
    keepalive 128;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    client_max_body_size 64m;
    client_body_buffer_size 64k;
    location / {
      proxy_pass http://catalog;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_buffer_size 16k;
      proxy_buffers 8 16k;
      proxy_busy_buffers_size 32k;
    }
  }
}
`
}
