"""PyIceberg through iceguard: create, append and scan, every update_schema() operation, a refused
change and a concurrent one (test/interop/pyiceberg.test.ts asserts on the printed record).

Settings (argv[1], JSON): uri (iceguard).
"""
import pyarrow as pa
from common import Recorder, settings
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import FloatType, IntegerType, LongType, NestedField, StringType, StructType

cfg = settings()
catalog = load_catalog("lake", type="rest", uri=cfg["uri"])
rec = Recorder()


def fields(table_name):
    """The current schema as the catalog has it now: (id, name, type, required) per field."""
    def read():
        schema = catalog.load_table(table_name).schema()
        return [[f.field_id, f.name, str(f.field_type), f.required] for f in schema.fields]
    return read


def evolve(table_name, change, **kwargs):
    def run():
        with catalog.load_table(table_name).update_schema(**kwargs) as update:
            change(update)
        return fields(table_name)()
    return run


schema = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "qty", IntegerType(), required=False),
    NestedField(3, "price", FloatType(), required=True),
    NestedField(4, "addr", StructType(NestedField(5, "city", StringType(), required=False)), required=False),
)
rows = pa.Table.from_pylist(
    [{"id": 1, "qty": 2, "price": 1.5, "addr": {"city": "Oslo"}}, {"id": 2, "qty": 5, "price": 2.5, "addr": {"city": "Rome"}}],
    schema=pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("qty", pa.int32()),
        pa.field("price", pa.float32(), nullable=False),
        pa.field("addr", pa.struct([pa.field("city", pa.string())])),
    ]),
)

for ns in ("eng", "guarded"):
    name = f"{ns}.orders"
    rec.step(f"{ns}: create namespace", lambda ns=ns: catalog.create_namespace(ns) and None)
    rec.step(f"{ns}: create table", lambda name=name: [str(f) for f in catalog.create_table(name, schema=schema).schema().fields] and None)
    rec.step(f"{ns}: append", lambda name=name: catalog.load_table(name).append(rows) and None)
    rec.step(f"{ns}: scan", lambda name=name: sorted(catalog.load_table(name).scan().to_arrow().to_pylist(), key=lambda r: r["id"]))
    rec.step(f"{ns}: add column", evolve(name, lambda u: u.add_column("note", StringType())))
    rec.step(f"{ns}: add nested column", evolve(name, lambda u: u.add_column(("addr", "zip"), StringType())))
    rec.step(f"{ns}: rename column", evolve(name, lambda u: u.rename_column("note", "remark")))
    rec.step(f"{ns}: widen int to long", evolve(name, lambda u: u.update_column("qty", LongType())))
    rec.step(f"{ns}: union_by_name", evolve(name, lambda u: u.union_by_name(Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "tag", StringType(), required=False),
        NestedField(3, "score", IntegerType(), required=False),
    ))))
    rec.step(f"{ns}: make_column_optional", evolve(name, lambda u: u.make_column_optional("price")))
    rec.step(f"{ns}: narrow long to int (refused)", evolve(name, lambda u: u.update_column("qty", IntegerType()), allow_incompatible_changes=True))
    rec.step(f"{ns}: schema before delete", fields(name))
    rec.step(f"{ns}: delete column", evolve(name, lambda u: u.delete_column("tag")))
    rec.step(f"{ns}: schema after delete", fields(name))
    rec.step(f"{ns}: scan after", lambda name=name: sorted(catalog.load_table(name).scan().to_arrow().to_pylist(), key=lambda r: r["id"]))


def concurrent():
    """Two writers start from the same metadata; the second commit's base is stale."""
    first = catalog.load_table("eng.orders")
    second = catalog.load_table("eng.orders")
    with first.update_schema() as update:
        update.add_column("first_writer", StringType())
    with second.update_schema() as update:
        update.add_column("second_writer", StringType())


rec.step("guarded: create table refused", lambda: catalog.create_table("guarded.bad", schema=Schema(NestedField(1, "Bad", IntegerType(), required=False))) and None)
rec.step("guarded: table exists after refused create", lambda: catalog.table_exists("guarded.bad"))
rec.step("concurrent change", concurrent)
rec.step("schema after concurrent change", fields("eng.orders"))
rec.emit()
