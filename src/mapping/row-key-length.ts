/**
 * Length of a row key (src/mapping/row-key.ts computes them: sha1 in base64url). The state stores
 * and pages row keys as fixed-width strings of this length, so both sides need the one figure.
 */
export const ROW_KEY_LENGTH = 27;
