/**
 * The words `last_first` recognises after a name (docs/mapping.md, "Names"). Data, not logic: add
 * a word here (lowercase, without dots or spaces) and it is recognised, written as the cell has it.
 *
 * A word is looked up with its dots and spaces removed and case ignored, so "Ph. D.", "PhD" and
 * "ph.d." are one entry. Generational suffixes follow the name with a space ("John Doe Jr.");
 * post-nominals follow it with a comma ("Jane Smith, PhD"), as style guides write them.
 *
 * Two-letter degrees that are also names ("Ma", "Ba") are left out: a word with two capitals that
 * the list does not know ("MA", "MSc.Ed.") makes `last_first` leave the name as written, with a warning.
 *
 * "V" counts as a suffix only in a part of its own ("Doe, John, V"): after a given name it is as
 * likely an initial ("Doe, John V"), and an initial must not move.
 */

/** Jr, Sr and the ordinals II to V. */
export const GENERATIONAL_SUFFIXES: readonly string[] = ['jr', 'sr', 'ii', 'iii', 'iv', 'v'];

/** Degrees, honours and professional designations seen after names in reviewer rosters. */
export const POST_NOMINALS: readonly string[] = [
  // Doctorates
  'phd', 'dphil', 'md', 'dmd', 'dds', 'dvm', 'vmd', 'edd', 'dsc', 'scd', 'dlitt', 'littd', 'lld', 'jd', 'dnp', 'drph', 'pharmd', 'psyd', 'dpt', 'dba',
  'drrernat', 'drmed', 'habil', 'drhabil', 'mdphd',
  // Master's and bachelor's degrees
  'msc', 'mphil', 'mba', 'mpa', 'mph', 'mres', 'llm', 'med', 'mfa', 'meng', 'msw', 'mpp', 'mlis', 'msn', 'bsc', 'bphil', 'beng', 'llb', 'bcl',
  'mbbs', 'mbchb', 'bchir', 'bmbs', 'rn', 'aprn', 'ceng',
  // Fellowships and honours
  'frs', 'frse', 'fba', 'fmedsci', 'freng', 'frsc', 'frcp', 'frcs', 'frcpath', 'frcpsych', 'frcog', 'frcr', 'frcpc', 'frcsc', 'facp', 'facs', 'facc', 'faha', 'fass', 'fiee', 'fieee', 'fiet',
  'finstp', 'fims', 'fls', 'fgs', 'fsa', 'frhists', 'faaas', 'fas', 'obe', 'mbe', 'cbe', 'kbe', 'dbe', 'ch', 'om', 'kc', 'qc', 'mp', 'mep', 'esq', 'esquire',
  // Professional designations (as in public name-parser corpora)
  'cpa', 'cfa', 'cfp', 'clu', 'chfc', 'lutc', 'cfe', 'cma', 'pmp', 'cissp', 'cpcu', 'rph',
];

/** Lookup form of a word: lowercase, without dots and spaces ("Ph. D." → "phd"). */
export function suffixKey(word: string): string {
  return word.toLowerCase().replace(/[.\s]/g, '');
}

const GENERATIONAL = new Set(GENERATIONAL_SUFFIXES);
const POST_NOMINAL = new Set(POST_NOMINALS.map(suffixKey));

/** `generational`, `post_nominal`, or undefined for any other word. */
export function suffixKind(word: string): 'generational' | 'post_nominal' | undefined {
  const key = suffixKey(word);
  if (GENERATIONAL.has(key)) return 'generational';
  return POST_NOMINAL.has(key) ? 'post_nominal' : undefined;
}
