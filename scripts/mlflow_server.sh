#!/usr/bin/env bash
# A team MLflow tracking server: runs in a SQL database, artifacts served from an artifact store.
#
#   bash scripts/mlflow_server.sh                       # sqlite:///mlflow-server.db, ./mlartifacts, 127.0.0.1:5000
#   MLFLOW_BACKEND_STORE_URI=postgresql://user:pw@db/mlflow \
#   MLFLOW_ARTIFACTS_DESTINATION=s3://bucket/mlflow HOST=0.0.0.0 PORT=5000 bash scripts/mlflow_server.sh
#
# Then point every stage at it: export MLFLOW_TRACKING_URI=http://<host>:<port>, and `make repro` logs there.
# The server binds 127.0.0.1 unless HOST says otherwise: exposing it (HOST=0.0.0.0) is a deliberate choice;
# MLflow has no authentication by default, so put it behind a proxy or VPN on shared networks.
# SQLite allows one writer at a time; for a team, use PostgreSQL or MySQL (their drivers: psycopg2 / pymysql).
set -euo pipefail
BACKEND="${MLFLOW_BACKEND_STORE_URI:-sqlite:///mlflow-server.db}"
ARTIFACTS="${MLFLOW_ARTIFACTS_DESTINATION:-./mlartifacts}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-5000}"
WORKERS="${WORKERS:-1}"
export MLFLOW_DISABLE_TELEMETRY=true
exec mlflow server --backend-store-uri "$BACKEND" --artifacts-destination "$ARTIFACTS" --serve-artifacts \
  --host "$HOST" --port "$PORT" --workers "$WORKERS"
