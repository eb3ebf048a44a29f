/**
 * Compiles the project (src/, routes/) and the benchmark's own servers to plain JavaScript
 * before a run, so that what is measured is the code `npm start` runs, not a loader's output:
 * tsx compiles with esbuild's keepNames, which wraps functions created per request (class field
 * arrow functions) in a naming helper and showed up in profiles at ~1% of the proxy's CPU.
 *
 * TypeScript's transpileModule is used file by file (no type check, a second or two); type
 * errors are `npm run typecheck`'s business. The output goes to `.bench-build/` at the project
 * root, the same depth as `dist/`, so that paths relative to the compiled files resolve as in
 * a build; the folder ignores itself in git.
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { BUILD_DIR, PROJECT_DIR } from './processes.js'
const ROOTS = ['src', 'routes', 'bench']

function walk (dir: string, out: string[]): string[] {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const e of entries) {
    if (e === 'node_modules' || e === 'results' || e.startsWith('.')) continue
    const p = path.join(dir, e)
    if (statSync(p).isDirectory()) walk(p, out)
    else out.push(p)
  }
  return out
}

/**
 * Compiles everything into BUILD_DIR; returns the number of files written. With `project`, another
 * checkout's src/ and routes/ go into its own `.bench-build/` (a build B run next to this one).
 */
export function buildForBench (project = PROJECT_DIR): number {
  const buildDir = project === PROJECT_DIR ? BUILD_DIR : path.join(project, '.bench-build')
  const roots = project === PROJECT_DIR ? ROOTS : ['src', 'routes']
  rmSync(buildDir, { recursive: true, force: true })
  mkdirSync(buildDir, { recursive: true })
  writeFileSync(path.join(buildDir, '.gitignore'), '*\n')
  let n = 0
  for (const root of roots) {
    for (const file of walk(path.join(project, root), [])) {
      const rel = path.relative(project, file)
      const target = path.join(buildDir, rel)
      mkdirSync(path.dirname(target), { recursive: true })
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) {
        const out = ts.transpileModule(readFileSync(file, 'utf8'), {
          fileName: file,
          compilerOptions: {
            target: ts.ScriptTarget.ES2022,
            module: ts.ModuleKind.ES2022,
            verbatimModuleSyntax: true,
            esModuleInterop: true,
            sourceMap: false
          }
        })
        writeFileSync(target.replace(/\.ts$/, '.js'), out.outputText)
        n++
      } else if (!file.endsWith('.d.ts')) {
        copyFileSync(file, target)
      }
    }
  }
  return n
}
