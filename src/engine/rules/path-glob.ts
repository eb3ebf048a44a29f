/**
 * Globs over dotted names. A glob is split on `.` into segments; in a segment `*` matches any run
 * of characters and `?` one character (never a dot), and a whole segment `**` matches any number
 * of segments. Namespace levels that themselves contain a dot cannot be told apart from nesting.
 */

export function splitDotted (name: string): string[] {
  return name.split('.')
}

function isGlobSegment (segment: string): boolean {
  return /[*?]/.test(segment)
}

const segmentRegexCache = new Map<string, RegExp>()

function segmentRegex (glob: string): RegExp {
  let re = segmentRegexCache.get(glob)
  if (!re) {
    re = new RegExp('^' + glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$')
    segmentRegexCache.set(glob, re)
  }
  return re
}

/** True when the glob segments match `names` exactly (all of them). */
export function matchSegments (glob: readonly string[], names: readonly string[]): boolean {
  if (glob.length === 0) return names.length === 0
  const [head, ...rest] = glob as [string, ...string[]]
  if (head === '**') {
    for (let skip = 0; skip <= names.length; skip++) {
      if (matchSegments(rest, names.slice(skip))) return true
    }
    return false
  }
  if (names.length === 0) return false
  return segmentRegex(head).test(names[0] as string) && matchSegments(rest, names.slice(1))
}

/**
 * How a namespace glob applies to a table's namespace: it covers the namespace when it matches the
 * namespace or one of its ancestors (`finance` covers `finance.eu`). Returns the depth of the
 * longest matching prefix, or 0 when it does not apply.
 */
export function namespaceMatchDepth (glob: readonly string[], namespace: readonly string[]): number {
  for (let k = namespace.length; k >= 1; k--) {
    if (matchSegments(glob, namespace.slice(0, k))) return k
  }
  return 0
}

/** Number of segments without wildcards: among globs of equal depth, the more literal is more specific. */
export function literalSegments (glob: readonly string[]): number {
  return glob.filter(s => !isGlobSegment(s)).length
}

/** A field path glob covers the path itself and everything nested under it. */
export function pathCovers (glob: string, path: string): boolean {
  const g = splitDotted(glob)
  const p = splitDotted(path)
  for (let k = p.length; k >= 1; k--) {
    if (matchSegments(g, p.slice(0, k))) return true
  }
  return false
}
