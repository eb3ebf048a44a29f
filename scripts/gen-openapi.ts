/**
 * Writes the committed copy of the OpenAPI document (`openapi/iceguard.openapi.json` and `.yaml`)
 * from the server's own route schemas: exactly what `/openapi.json` and `/openapi.yaml` serve.
 *
 *   npm run openapi:generate        rewrite the files
 *   npm run openapi:check           exit 1 when they differ from what the server serves
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/main/app.js'
import { configFrom } from '../src/main/config.js'

export const OPENAPI_JSON = fileURLToPath(new URL('../openapi/iceguard.openapi.json', import.meta.url))
export const OPENAPI_YAML = fileURLToPath(new URL('../openapi/iceguard.openapi.yaml', import.meta.url))

/** The document as the server serves it. The upstream is never contacted. */
export async function generateOpenApi (): Promise<{ json: string, yaml: string }> {
  const app = await buildApp(configFrom({ 'log-level': 'silent', upstream: 'http://127.0.0.1:9' }))
  try {
    await app.ready()
    return { json: JSON.stringify(app.swagger(), null, 2) + '\n', yaml: app.swagger({ yaml: true }) }
  } finally {
    await app.close()
  }
}

function read (file: string): string | undefined {
  try { return readFileSync(file, 'utf8') } catch { return undefined }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { json, yaml } = await generateOpenApi()
  if (process.argv.includes('--check')) {
    const stale = [[OPENAPI_JSON, json], [OPENAPI_YAML, yaml]].filter(([file, text]) => read(file as string) !== text).map(([file]) => file)
    if (stale.length > 0) {
      process.stderr.write(`OpenAPI document out of date: ${stale.join(', ')}; run npm run openapi:generate\n`)
      process.exitCode = 1
    }
  } else {
    writeFileSync(OPENAPI_JSON, json)
    writeFileSync(OPENAPI_YAML, yaml)
  }
}
