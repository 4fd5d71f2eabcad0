import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'data/', 'uploads/', 'public/vendor/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off'
    }
  },
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', io: 'readonly', FormData: 'readonly', XMLHttpRequest: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URLSearchParams: 'readonly', confirm: 'readonly', Date: 'readonly' } }
  }
)
