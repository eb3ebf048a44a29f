"""DuckDB's iceberg extension through iceguard: ATTACH, CREATE TABLE, INSERT, SELECT, ALTER TABLE,
and refused changes (test/interop/duckdb.test.ts asserts on the printed record).

The extensions are LOADed from the PyPI wheels' folders with autoloading off, so DuckDB fetches
nothing at run time. Settings (argv[1], JSON): uri (iceguard).
"""
import glob
import os

import duckdb
from common import Recorder, settings

cfg = settings()
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
site = os.path.dirname(os.path.dirname(duckdb.__file__))
for ext in ("httpfs", "avro", "iceberg"):
    path = glob.glob(os.path.join(site, f"duckdb_extension_{ext}", "extensions", "*", f"{ext}.duckdb_extension"))[0]
    con.execute(f"LOAD '{path}'")
rec = Recorder()


def sql(statement):
    def run():
        cur = con.execute(statement)
        try:
            return [list(r) for r in cur.fetchall()]
        except duckdb.InvalidInputException:
            return None
    return run


def describe(table):
    return lambda: [[r[0], r[1]] for r in con.execute(f"DESCRIBE {table}").fetchall()]


rec.step("attach", sql(f"ATTACH 'warehouse' AS ice (TYPE ICEBERG, ENDPOINT '{cfg['uri']}', AUTHORIZATION_TYPE 'none')"))
for ns in ("eng", "guarded"):
    t = f"ice.{ns}.orders"
    rec.step(f"{ns}: create schema", sql(f"CREATE SCHEMA ice.{ns}"))
    rec.step(f"{ns}: create table", sql(f"CREATE TABLE {t} (id BIGINT, qty INTEGER, note VARCHAR)"))
    rec.step(f"{ns}: insert", sql(f"INSERT INTO {t} VALUES (1, 2, 'a'), (2, 5, 'b')"))
    rec.step(f"{ns}: select", sql(f"SELECT id, qty, note FROM {t} ORDER BY id"))
    rec.step(f"{ns}: add column", sql(f"ALTER TABLE {t} ADD COLUMN score INTEGER"))
    rec.step(f"{ns}: widen int to bigint", sql(f"ALTER TABLE {t} ALTER COLUMN qty TYPE BIGINT"))
    rec.step(f"{ns}: retype bigint to varchar (refused)", sql(f"ALTER TABLE {t} ALTER COLUMN qty TYPE VARCHAR"))
    rec.step(f"{ns}: columns before drop", describe(t))
    rec.step(f"{ns}: drop column", sql(f"ALTER TABLE {t} DROP COLUMN note"))
    rec.step(f"{ns}: columns after", describe(t))
    rec.step(f"{ns}: select after", sql(f"SELECT * FROM {t} ORDER BY id"))
rec.step("guarded: create table refused", sql('CREATE TABLE ice.guarded.bad ("Bad" INTEGER)'))
rec.step("guarded: tables after refused create", sql("SELECT table_name FROM duckdb_tables() WHERE database_name = 'ice' AND schema_name = 'guarded' ORDER BY table_name"))
rec.emit(duckdb=duckdb.__version__)
