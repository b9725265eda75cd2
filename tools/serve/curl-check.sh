#!/usr/bin/env bash
# Starts ./fs serve on a committed tiny model, checks /health and one chat completion with curl, then stops it with
# SIGTERM and checks that it exits 0. Usage: tools/serve/curl-check.sh [MODEL] (default: models/tiny-tied).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
model="${1:-$root/models/tiny-tied}"
port="${FS_SERVE_PORT:-$((20000 + RANDOM % 20000))}"
log="$(mktemp)"
trap 'rm -f "$log"; [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null || true' EXIT

fail() { echo "curl-check: $*" >&2; sed 's/^/  server: /' "$log" >&2; exit 1; }

"$root/fs" serve "$model" --port "$port" --backend cpu 2>"$log" &
pid=$!

# /health answers 503 while the model loads (and warms up), then 200.
for _ in $(seq 1 600); do
  status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)"
  [[ "$status" == 200 ]] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited before it was ready"
  sleep 0.2
done
[[ "$status" == 200 ]] || fail "/health never said 200 (last: $status)"
curl -sf "http://127.0.0.1:$port/health" | grep -q '"status":"ok"' || fail "/health body is not {\"status\":\"ok\"}"

answer="$(curl -sf "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"Why is the sky blue?"}],"max_tokens":8,"temperature":0}')" \
  || fail "the chat completion failed"
for field in '"object":"chat.completion"' '"role":"assistant"' '"finish_reason":"length"' '"completion_tokens":8'; do
  grep -qF "$field" <<<"$answer" || fail "the chat completion lacks $field: $answer"
done

status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" \
  -H 'Content-Type: application/json' -d '{"messages":')"
[[ "$status" == 400 ]] || fail "malformed JSON got $status, not 400"

# curl's -d alone sends a form (application/x-www-form-urlencoded), as a web page's simple request would.
status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" \
  -d '{"messages":[{"role":"user","content":"Hi"}]}')"
[[ "$status" == 415 ]] || fail "a body not sent as application/json got $status, not 415"

kill -TERM "$pid"
set +e
wait "$pid"
exit_status=$?
set -e
pid=""
[[ "$exit_status" == 0 ]] || fail "after SIGTERM the server exited with $exit_status, not 0"
echo "curl-check: ok (health 200, chat completion, 400 on malformed JSON, 415 on a form, exit 0 on SIGTERM)"
