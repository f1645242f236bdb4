import { UserError } from '../internal/errors.js';

/**
 * The one-line refusal of `mustExist` (`serve`, which never writes chain data): `where` names
 * the store as the user gave it, without credentials.
 */
export function missingStoreError(where: string): UserError {
  return new UserError(
    `no store at ${where}: create it with \`tokenquery index\` (or \`start\`, \`import\`, \`demo\`)`,
  );
}
