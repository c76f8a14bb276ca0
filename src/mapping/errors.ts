/**
 * A mapping that cannot be applied to this organization or this roster: an unknown custom field
 * name, an option label the field does not have, a column missing from the file's header.
 * Raised before any row is mapped, so nothing is written (exit code 1).
 */
import { ConfigError, type ConfigErrorOptions, type ConfigProblem } from '../errors/config-error.js';

export class MappingError extends ConfigError {
  override name = 'MappingError';

  constructor(file: string, problems: ConfigProblem[], options: ConfigErrorOptions = {}) {
    super(file, problems, options);
  }
}
