import { UserError } from '../internal/errors.js';

/** The refusal of `mustExist`: no store where one was expected (`where`, without credentials). */
export class MissingStoreError extends UserError {
  override name = 'MissingStoreError';

  constructor(readonly where: string) {
    // One line for `serve`, which never writes chain data: what is missing and what creates it.
    super(`no store at ${where}: create it with \`tokenquery index\` (or \`start\`, \`import\`, \`demo\`)`);
  }
}
