import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import tseslint from 'typescript-eslint'

// One style everywhere (service, emulator, tests, bench, scripts, dashboard): two spaces, single quotes,
// no semicolons, a space before a function's parentheses. `npm run format` applies it.
const style = stylistic.configs.customize({ indent: 2, quotes: 'single', semi: false, commaDangle: 'never', braceStyle: '1tbs', arrowParens: true })

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.test-build/', 'coverage/', 'data/', 'uploads/', 'public/vendor/', 'client/dist/', 'client/src/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  style,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
      '@stylistic/space-before-function-paren': ['error', 'always'],
      '@stylistic/max-statements-per-line': 'off',
      '@stylistic/multiline-ternary': 'off',
      '@stylistic/operator-linebreak': 'off',
      '@stylistic/quote-props': 'off',
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/member-delimiter-style': ['error', { multiline: { delimiter: 'none' }, singleline: { delimiter: 'comma', requireLast: false } }],
      // files are sized by idea, not packed under the layout test's line cap: a line holds at most 160
      // characters (one with a URL, string, template literal or regex may run longer); `npm run lint:long` lists them
      '@stylistic/max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }]
    }
  },
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', io: 'readonly', FormData: 'readonly', XMLHttpRequest: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URLSearchParams: 'readonly', URL: 'readonly', FileReader: 'readonly', confirm: 'readonly', Date: 'readonly' } }
  }
)
