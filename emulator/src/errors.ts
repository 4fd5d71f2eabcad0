/** An error the control API reports as `{ error }` with this HTTP status. */
export class EmulatorError extends Error {
  constructor (
    readonly status: 400 | 404 | 409 | 504,
    message: string
  ) {
    super(message)
    this.name = 'EmulatorError'
  }
}
