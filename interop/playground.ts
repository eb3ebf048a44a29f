/**
 * `npm run playground`: the playground without Docker. The Iceberg REST fixture (the real catalog,
 * from `npm run interop:setup`) on a loopback port with its catalog and warehouse in
 * `./playground-data/` (kept between runs), and iceguard in front of it on 127.0.0.1:8181 with the
 * playground's policy and admin token, as `docker-compose.yml` sets them. Prints how to connect
 * PySpark and PyIceberg from the interop toolchain's virtualenv. Flags after `--` go to iceguard
 * (`npm run playground -- --port 9181`); Ctrl-C stops both.
 */
import { resolve } from 'node:path'
import { main } from '../src/main/server.js'
import { startFixture } from '../test/interop/helpers/fixture.js'
import { cacheDir, missingParts, python, sparkRuntimeJar } from '../test/interop/helpers/toolchain.js'

const missing = missingParts(['java', 'fixture'])
if (missing.length > 0) {
  process.stderr.write(`playground: ${missing.join(', ')} not installed; run \`npm run interop:setup\` first (interop/README.md)\n`)
  process.exit(1)
}

const dataDir = resolve('playground-data')
process.stdout.write(`playground: starting the Iceberg REST fixture (catalog and warehouse in ${dataDir}) …\n`)
const fixture = await startFixture({ dir: dataDir })
// iceguard's own shutdown (Ctrl-C, SIGTERM, a fatal error) ends the process: the fixture goes with it.
process.once('exit', () => { fixture.kill() })
const running = await main(
  ['--upstream', fixture.url, '--host', '127.0.0.1', '--policy', 'deploy/policy.yaml', '--memory', ...process.argv.slice(2)],
  { ICEGUARD_ADMIN_TOKEN: 'playground-admin-token', ...process.env }
)
if (running === undefined) {
  await fixture.stop()
  process.exit(process.exitCode ?? 1)
}

const uri = running.url.replace('0.0.0.0', '127.0.0.1')
const missingPython = missingParts(['python', 'spark'])
process.stdout.write(`
iceguard ${uri}  →  Iceberg REST fixture ${fixture.url} (every client goes through iceguard)
admin token: playground-admin-token   Swagger UI: ${uri}/docs   console: ${uri}/console

Spark SQL (the interop toolchain's PySpark; its scripts find Spark through the virtualenv's Python):
  . ${cacheDir}/venv/bin/activate
  spark-sql --master 'local[1]' \\
    --jars ${sparkRuntimeJar()} \\
    --conf spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions \\
    --conf spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog \\
    --conf spark.sql.catalog.lake.type=rest \\
    --conf spark.sql.catalog.lake.uri=${uri} \\
    --conf spark.sql.catalog.lake.cache-enabled=false

PyIceberg:
  ${python} -c "from pyiceberg.catalog import load_catalog; c = load_catalog('lake', type='rest', uri='${uri}'); print(c.list_namespaces())"
${missingPython.length > 0 ? `\n(${missingPython.join(', ')} not installed yet: \`npm run interop:setup\` installs them)\n` : ''}
Walkthrough: docs/playground.md. Ctrl-C stops iceguard and the fixture.
`)
