"""Spark SQL through iceguard: one local[1] session, SparkCatalog type=rest, every statement of the
suite in order (test/interop/spark.test.ts asserts on the printed record).

Settings (argv[1], JSON): uri (iceguard), jar (the Iceberg Spark runtime), warehouse (scratch folder
for Spark's own files).
"""
from common import Recorder, settings

from pyspark.sql import SparkSession

cfg = settings()
spark = (
    SparkSession.builder.master("local[1]")
    .appName("iceguard-interop")
    .config("spark.jars", cfg["jar"])
    .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.lake.type", "rest")
    .config("spark.sql.catalog.lake.uri", cfg["uri"])
    .config("spark.sql.catalog.lake.cache-enabled", "false")
    .config("spark.sql.defaultCatalog", "lake")
    .config("spark.sql.warehouse.dir", cfg["scratch"] + "/spark-warehouse")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.default.parallelism", "1")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
rec = Recorder()


def sql(statement):
    return lambda: [r.asDict(recursive=True) for r in spark.sql(statement).collect()]


def columns(table):
    """The table's columns as Spark reads them back: name and Spark type, nested fields included."""
    def read():
        return spark.table(table).schema.jsonValue()
    return read


def rows(table, order="id"):
    return lambda: [r.asDict(recursive=True) for r in spark.sql(f"SELECT * FROM {table} ORDER BY {order}").collect()]


def run(name, statement):
    rec.step(name, sql(statement))


run("create namespace eng", "CREATE NAMESPACE lake.eng")
run("create namespace guarded", "CREATE NAMESPACE lake.guarded")
for ns in ("eng", "guarded"):
    t = f"lake.{ns}.orders"
    run(f"{ns}: create table", f"CREATE TABLE {t} (id bigint NOT NULL, qty int, price float, addr struct<city: string>) USING iceberg")
    run(f"{ns}: insert", f"INSERT INTO {t} VALUES (1, 2, 1.5, named_struct('city', 'Oslo')), (2, 5, 2.5, named_struct('city', 'Rome'))")
    rec.step(f"{ns}: select", rows(t))
    run(f"{ns}: add column", f"ALTER TABLE {t} ADD COLUMN note string")
    run(f"{ns}: add columns", f"ALTER TABLE {t} ADD COLUMNS (tag string, score int)")
    run(f"{ns}: add nested column", f"ALTER TABLE {t} ADD COLUMN addr.zip string")
    run(f"{ns}: rename column", f"ALTER TABLE {t} RENAME COLUMN note TO remark")
    run(f"{ns}: alter column type bigint", f"ALTER TABLE {t} ALTER COLUMN qty TYPE bigint")
    run(f"{ns}: alter column type string", f"ALTER TABLE {t} ALTER COLUMN score TYPE string")
    rec.step(f"{ns}: schema before drop", columns(t))
    run(f"{ns}: drop column", f"ALTER TABLE {t} DROP COLUMN tag")
    rec.step(f"{ns}: schema after drop", columns(t))
    rec.step(f"{ns}: rows after drop", rows(t))

# Creates the policy refuses in `guarded` (a column name not in lower snake_case): a plain create,
# and a CTAS, which Spark stages and completes with a commit.
run("guarded: create table refused", "CREATE TABLE lake.guarded.bad (Bad int) USING iceberg")
run("guarded: ctas refused", "CREATE TABLE lake.guarded.bad AS SELECT id AS Bad FROM lake.guarded.orders")
rec.step("guarded: tables after refused creates", sql("SHOW TABLES IN lake.guarded"))

run("ctas", "CREATE TABLE lake.eng.summary USING iceberg AS SELECT id, qty FROM lake.eng.orders")
rec.step("ctas: rows", rows("lake.eng.summary"))
run("rtas", "CREATE OR REPLACE TABLE lake.eng.summary USING iceberg AS SELECT id, qty, price FROM lake.eng.orders WHERE id = 2")
rec.step("rtas: rows", rows("lake.eng.summary"))
rec.step("rtas: columns", columns("lake.eng.summary"))
run("create view", "CREATE VIEW lake.eng.big AS SELECT id, qty FROM lake.eng.orders WHERE qty > 3")
rec.step("view: rows", rows("lake.eng.big"))
# Spark 4.0 with Iceberg 1.10 refuses ALTER VIEW ... AS ("use CREATE OR REPLACE VIEW instead");
# both are recorded, and the view's properties are altered with SET TBLPROPERTIES.
run("alter view as", "ALTER VIEW lake.eng.big AS SELECT id FROM lake.eng.orders")
run("create or replace view", "CREATE OR REPLACE VIEW lake.eng.big AS SELECT id FROM lake.eng.orders")
rec.step("replaced view: rows", rows("lake.eng.big"))
run("alter view set tblproperties", "ALTER VIEW lake.eng.big SET TBLPROPERTIES ('owner.team' = 'data')")
rec.step("view properties", sql("SHOW TBLPROPERTIES lake.eng.big"))
run("drop view", "DROP VIEW lake.eng.big")
run("drop table", "DROP TABLE lake.eng.summary")
rec.step("show tables", sql("SHOW TABLES IN lake.eng"))

# The view blast radius: in `reporting` the policy refuses a change that breaks a view
# (VIEW_REFERENCES_COLUMN: error). The view is known to iceguard from its create passing through it.
run("create namespace reporting", "CREATE NAMESPACE lake.reporting")
run("reporting: create table", "CREATE TABLE lake.reporting.orders (id bigint NOT NULL, amount double, note string) USING iceberg")
run("reporting: insert", "INSERT INTO lake.reporting.orders VALUES (1, 9.5, 'a'), (2, 12.0, 'b')")
run("reporting: create view", "CREATE VIEW lake.reporting.order_amounts AS SELECT id, amount FROM lake.reporting.orders")
run("reporting: rename read column", "ALTER TABLE lake.reporting.orders RENAME COLUMN amount TO total")
rec.step("reporting: columns after refused rename", columns("lake.reporting.orders"))
rec.step("reporting: view rows after refused rename", rows("lake.reporting.order_amounts"))
run("reporting: rename unread column", "ALTER TABLE lake.reporting.orders RENAME COLUMN note TO remark")
rec.step("reporting: columns after renames", columns("lake.reporting.orders"))

rec.emit(spark=spark.version)
spark.stop()
