/**
 * Encoding labels of the WHATWG Encoding Standard (https://encoding.spec.whatwg.org/, the
 * `encodings.json` table), each mapped to its encoding's name and to the iconv-lite codec that
 * decodes it the way the standard does. Labels are matched as the standard says: ASCII
 * case-insensitively, after trimming ASCII whitespace.
 *
 * Left out, with the reason given when a pipeline names them (`UNSUPPORTED_LABELS`): ISO-2022-JP (iconv-lite has no decoder for it), `replacement` (the standard's sink for
 * ISO-2022-KR/CN and HZ, which decode to nothing) and `x-user-defined` (not a text encoding).
 */

/** Encoding name (as the standard spells it) → its labels. */
const LABELS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["UTF-8", ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"]],
  ["UTF-16LE", ["csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"]],
  ["UTF-16BE", ["unicodefffe", "utf-16be"]],
  ["IBM866", ["866", "cp866", "csibm866", "ibm866"]],
  ["ISO-8859-2", ["csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"]],
  ["ISO-8859-3", ["csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"]],
  ["ISO-8859-4", ["csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"]],
  ["ISO-8859-5", ["csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595", "iso_8859-5", "iso_8859-5:1988"]],
  ["ISO-8859-6", ["arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114", "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987"]],
  ["ISO-8859-7", ["csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126", "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek"]],
  ["ISO-8859-8", ["csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138", "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988", "visual"]],
  ["ISO-8859-8-I", ["csiso88598i", "iso-8859-8-i", "logical"]],
  ["ISO-8859-10", ["csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6"]],
  ["ISO-8859-13", ["iso-8859-13", "iso8859-13", "iso885913"]],
  ["ISO-8859-14", ["iso-8859-14", "iso8859-14", "iso885914"]],
  ["ISO-8859-15", ["csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9"]],
  ["ISO-8859-16", ["iso-8859-16"]],
  ["KOI8-R", ["cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"]],
  ["KOI8-U", ["koi8-ru", "koi8-u"]],
  ["macintosh", ["csmacintosh", "mac", "macintosh", "x-mac-roman"]],
  ["windows-874", ["dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"]],
  ["windows-1250", ["cp1250", "windows-1250", "x-cp1250"]],
  ["windows-1251", ["cp1251", "windows-1251", "x-cp1251"]],
  ["windows-1252", ["ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252"]],
  ["windows-1253", ["cp1253", "windows-1253", "x-cp1253"]],
  ["windows-1254", ["cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254"]],
  ["windows-1255", ["cp1255", "windows-1255", "x-cp1255"]],
  ["windows-1256", ["cp1256", "windows-1256", "x-cp1256"]],
  ["windows-1257", ["cp1257", "windows-1257", "x-cp1257"]],
  ["windows-1258", ["cp1258", "windows-1258", "x-cp1258"]],
  ["x-mac-cyrillic", ["x-mac-cyrillic", "x-mac-ukrainian"]],
  ["GBK", ["chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58", "x-gbk"]],
  ["gb18030", ["gb18030"]],
  ["Big5", ["big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"]],
  ["EUC-JP", ["cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"]],
  ["Shift_JIS", ["csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"]],
  ["EUC-KR", ["cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"]],
];

/**
 * iconv-lite codec per encoding. Where the standard's decoder is a superset of the ISO one, so is
 * the codec: Shift_JIS is Windows-31J (CP932), EUC-KR is UHC (CP949), Big5 is Big5-HKSCS, GBK
 * decodes as gb18030, and ISO-8859-8-I is ISO-8859-8 (the same bytes, in logical order).
 */
const ICONV: Readonly<Record<string, string>> = {
  'UTF-8': 'utf8',
  'UTF-16LE': 'utf16le',
  'UTF-16BE': 'utf16be',
  IBM866: 'cp866',
  'ISO-8859-8-I': 'iso-8859-8',
  'KOI8-R': 'koi8-r',
  'KOI8-U': 'koi8-u',
  macintosh: 'macintosh',
  'x-mac-cyrillic': 'maccyrillic',
  GBK: 'gb18030',
  gb18030: 'gb18030',
  Big5: 'big5hkscs',
  'EUC-JP': 'eucjp',
  Shift_JIS: 'shiftjis',
  'EUC-KR': 'cp949',
};

const UNSUPPORTED_LABELS: Readonly<Record<string, string>> = {
  'iso-2022-jp': 'ISO-2022-JP', csiso2022jp: 'ISO-2022-JP',
  'iso-2022-kr': 'ISO-2022-KR', csiso2022kr: 'ISO-2022-KR', 'iso-2022-cn': 'ISO-2022-CN', 'iso-2022-cn-ext': 'ISO-2022-CN',
  'hz-gb-2312': 'HZ-GB-2312', replacement: 'replacement', 'x-user-defined': 'x-user-defined',
};

const BY_LABEL = new Map<string, string>();
for (const [name, labels] of LABELS) for (const label of labels) BY_LABEL.set(label, name);

/** The standard's label matching: ASCII whitespace trimmed, ASCII case folded. */
function normalizeLabel(label: string): string {
  return label.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/** The encoding a label names (`latin1` → `windows-1252`, as the standard says), or undefined. */
export function encodingOfLabel(label: string): string | undefined {
  return BY_LABEL.get(normalizeLabel(label));
}

/** Why a label the standard knows is not read (undefined for labels we read, or do not know). */
export function unsupportedLabelReason(label: string): string | undefined {
  const name = UNSUPPORTED_LABELS[normalizeLabel(label)];
  if (name === undefined) return undefined;
  return `${name} has no decoder here; re-save the file as "CSV UTF-8"`;
}

/** The iconv-lite codec of an encoding name returned by `encodingOfLabel`. */
export function iconvCodec(encoding: string): string {
  return ICONV[encoding] ?? encoding.toLowerCase();
}

/** Labels listed in messages and docs as examples. */
export const EXAMPLE_LABELS = ['utf-8', 'windows-1250', 'windows-1251', 'iso-8859-2', 'koi8-r', 'shift_jis', 'gbk', 'big5', 'euc-kr'];
