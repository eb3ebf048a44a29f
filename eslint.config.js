// Lint: neostandard (standard's rules for flat config) with its TypeScript support.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', '.bench-build/**']
  }),
  {
    rules: {
      // `void promise` is how this code marks a promise it deliberately does not await.
      'no-void': ['error', { allowAsStatement: true }]
    }
  }
]
