/**
 * Regenerates the scholarly database of `src/emulator/default-fixture.yaml` (authors, articles,
 * journals, the default org's folders / pre-existing groups) from a seeded PRNG, so the committed
 * YAML is reproducible. The org's keys, settings, teams and custom fields are left as they are.
 *
 *   npx tsx scripts/generate-default-fixture.ts
 *
 * The result is committed; the emulator never runs this at start-up.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isScalar, isSeq, parseDocument, visit } from 'yaml';
import { DEFAULT_FIXTURE_PATH, parseFixture } from '../src/emulator/fixture.js';
import { seededRandom } from '../src/runtime/seeded-random.js';

const random = seededRandom(20260523);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
function sample<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0] as T);
  return out;
}

type Topic =
  | 'oncology'
  | 'cardiology'
  | 'neurology'
  | 'immunology'
  | 'genetics'
  | 'epidemiology'
  | 'machine learning'
  | 'statistics';

/** Per topic: concepts (also used as title words), subjects and settings for titles. */
const TOPICS: Record<Topic, { concepts: string[]; subjects: string[]; settings: string[] }> = {
  oncology: {
    concepts: ['oncology', 'chemotherapy', 'tumour microenvironment', 'metastasis', 'radiotherapy', 'carcinoma', 'immunotherapy', 'biomarkers'],
    subjects: ['Checkpoint inhibitor response', 'Adjuvant chemotherapy', 'Tumour microenvironment remodelling', 'Metastatic progression', 'Stereotactic radiotherapy', 'Circulating tumour DNA'],
    settings: ['breast carcinoma', 'colorectal cancer', 'non-small cell lung cancer', 'glioblastoma', 'pancreatic adenocarcinoma', 'melanoma'],
  },
  cardiology: {
    concepts: ['cardiology', 'heart failure', 'atrial fibrillation', 'hypertension', 'myocardial infarction', 'echocardiography', 'arrhythmia', 'coronary artery disease'],
    subjects: ['Anticoagulation strategies', 'Left ventricular remodelling', 'Blood pressure control', 'Catheter ablation outcomes', 'Echocardiographic strain imaging', 'Statin therapy'],
    settings: ['heart failure with preserved ejection fraction', 'atrial fibrillation', 'acute myocardial infarction', 'resistant hypertension', 'coronary artery disease', 'cardiac amyloidosis'],
  },
  neurology: {
    concepts: ['neurology', 'neurodegeneration', 'stroke', 'epilepsy', 'multiple sclerosis', 'dementia', 'neuroimaging', 'synaptic plasticity'],
    subjects: ['Amyloid imaging', 'Thrombectomy timing', 'Seizure prediction', 'Remyelination therapies', 'Cognitive decline trajectories', 'Synaptic plasticity markers'],
    settings: ["Alzheimer's disease", 'ischaemic stroke', 'drug-resistant epilepsy', 'relapsing multiple sclerosis', "Parkinson's disease", 'frontotemporal dementia'],
  },
  immunology: {
    concepts: ['immunology', 'T cells', 'cytokines', 'autoimmunity', 'vaccines', 'innate immunity', 'antibodies', 'inflammation'],
    subjects: ['Regulatory T cell function', 'Cytokine signalling', 'Vaccine-induced antibody responses', 'Innate immune sensing', 'Autoantibody profiling', 'Chronic inflammation'],
    settings: ['rheumatoid arthritis', 'systemic lupus erythematosus', 'influenza vaccination', 'sepsis', 'type 1 diabetes', 'inflammatory bowel disease'],
  },
  genetics: {
    concepts: ['genetics', 'genome-wide association', 'gene expression', 'CRISPR', 'epigenetics', 'rare variants', 'sequencing', 'polygenic risk'],
    subjects: ['Genome-wide association analysis', 'CRISPR screening', 'DNA methylation patterns', 'Rare variant burden', 'Single-cell sequencing', 'Polygenic risk scores'],
    settings: ['inherited cardiomyopathy', 'autism spectrum disorder', 'familial hypercholesterolaemia', 'hereditary breast cancer', 'schizophrenia', 'type 2 diabetes'],
  },
  epidemiology: {
    concepts: ['epidemiology', 'cohort study', 'incidence', 'mortality', 'risk factors', 'public health', 'surveillance', 'case-control study'],
    subjects: ['Population-based cohort analysis', 'Incidence trends', 'Excess mortality', 'Modifiable risk factors', 'Disease surveillance', 'Case-control evidence'],
    settings: ['tuberculosis', 'cardiovascular disease', 'childhood obesity', 'seasonal influenza', 'dementia', 'colorectal cancer screening'],
  },
  'machine learning': {
    concepts: ['machine learning', 'deep learning', 'neural networks', 'transformers', 'transfer learning', 'interpretability', 'federated learning', 'representation learning'],
    subjects: ['Deep learning segmentation', 'Transformer models', 'Interpretable neural networks', 'Federated learning', 'Self-supervised representation learning', 'Transfer learning'],
    settings: ['medical images', 'electronic health records', 'histopathology slides', 'clinical notes', 'electrocardiograms', 'protein structures'],
  },
  statistics: {
    concepts: ['statistics', 'bayesian inference', 'causal inference', 'survival analysis', 'missing data', 'meta-analysis', 'multiple testing', 'mixed models'],
    subjects: ['Bayesian hierarchical models', 'Causal inference', 'Survival analysis', 'Multiple imputation of missing data', 'Network meta-analysis', 'False discovery rate control'],
    settings: ['randomised trials', 'observational cohorts', 'adaptive clinical trials', 'longitudinal studies', 'diagnostic accuracy studies', 'registry data'],
  },
};
const TOPIC_NAMES = Object.keys(TOPICS) as Topic[];

const FIRST_NAMES = ['Ada', 'Ben', 'Chiara', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiroshi', 'Ines', 'Jonas', 'Kavya', 'Lars', 'Mei', 'Nadia', 'Omar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tomasz', 'Uma', 'Victor', 'Wen', 'Ximena', 'Yusuf', 'Zofia', 'Amara', 'Bruno', 'Carmen', 'Daniel', 'Esther', 'Felix', 'Gabriela', 'Hassan', 'Ingrid', 'Jae-won', 'Katarina', 'Leon', 'Maya', 'Niels', 'Olga', 'Pedro', 'Rania', 'Samuel', 'Tanvi', 'Ulrich', 'Valentina', 'William', 'Yara', 'Zhang'];
const LAST_NAMES = ['Okafor', 'Lindqvist', 'Moretti', 'Ivanov', 'García', 'Rahimi', 'Thompson', 'Tanaka', 'Ferreira', 'Becker', 'Iyer', 'Nilsen', 'Chen', 'Haddad', 'Al-Sayed', 'Raman', 'Dubois', 'Silva', 'Andersson', 'Kowalski', 'Patel', 'Novak', 'Liu', 'Herrera', 'Demir', 'Wiśniewska', 'Mensah', 'Costa', 'Ortega', 'Schmidt', 'Cohen', 'Weber', 'Rossi', 'Khan', 'Johansson', 'Park', 'Horvat', 'Fischer', 'Goldberg', 'Jensen', 'Petrova', 'Santos', 'Nasser', 'Adeyemi', 'Mehta', 'Keller', 'Romano', 'Walker', 'Aziz', 'Wei'];
const INSTITUTIONS = [
  'Karolinska Institutet, Stockholm, Sweden',
  'University of Oxford, Oxford, UK',
  'Charité – Universitätsmedizin Berlin, Berlin, Germany',
  'Johns Hopkins University, Baltimore, USA',
  'University of Tokyo, Tokyo, Japan',
  'Institut Pasteur, Paris, France',
  'University of Toronto, Toronto, Canada',
  'ETH Zurich, Zurich, Switzerland',
  'University of Melbourne, Melbourne, Australia',
  'University of Cape Town, Cape Town, South Africa',
  'Universidade de São Paulo, São Paulo, Brazil',
  'Leiden University Medical Center, Leiden, Netherlands',
  'University of Copenhagen, Copenhagen, Denmark',
  'Stanford University, Stanford, USA',
];

/** ORCID check digit (ISO 7064 MOD 11-2), so generated ORCIDs are valid-looking. */
function orcid(n: number): string {
  const digits = String(n).padStart(15, '0');
  let total = 0;
  for (const ch of digits) total = (total + Number(ch)) * 2;
  const remainder = total % 11;
  const check = (12 - remainder) % 11;
  const full = digits + (check === 10 ? 'X' : String(check));
  return `${full.slice(0, 4)}-${full.slice(4, 8)}-${full.slice(8, 12)}-${full.slice(12)}`;
}

function slug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[^\w]/g, '')
    .toLowerCase();
}

interface GenAuthor {
  id: number;
  first_name: string;
  last_name: string;
  middle_name: string | null;
  suffix: string | null;
  emails: string[];
  orcid: string | null;
  affiliations: string[];
  h_index: number;
  citations: number;
  topics: Topic[];
}

const authors: GenAuthor[] = [];
for (let i = 0; i < 60; i++) {
  const id = 201 + i;
  const first = FIRST_NAMES[i % FIRST_NAMES.length] as string;
  // The offset for i >= 50 keeps full names unique (name matching must not be ambiguous).
  const last = LAST_NAMES[(i * 7 + Math.floor(i / 50) * 3) % LAST_NAMES.length] as string;
  const primary = TOPIC_NAMES[i % TOPIC_NAMES.length] as Topic;
  const secondary = random() < 0.45 ? pick(TOPIC_NAMES.filter((t) => t !== primary)) : null;
  // Every 8th author has no known email (spec org setting "include candidates without email").
  const withoutEmail = i % 8 === 5;
  const affiliations = sample(INSTITUTIONS, int(1, 2));
  authors.push({
    id,
    first_name: first,
    last_name: last,
    middle_name: i % 11 === 3 ? pick(['J.', 'M.', 'A.', 'K.']) : null,
    suffix: i % 23 === 7 ? 'jr' : null,
    emails: withoutEmail ? [] : [`${slug(first)}.${slug(last)}@${slug(affiliations[0]!.split(',')[0]!).slice(0, 16)}.example.org`],
    // Every 6th author has no ORCID: conflicts and group links then rely on email or name.
    orcid: i % 6 === 4 ? null : orcid(2_000_000_000 + id * 7919),
    affiliations,
    h_index: 0,
    citations: 0,
    topics: secondary ? [primary, secondary] : [primary],
  });
}

interface GenArticle {
  id: number;
  title: string;
  abstract: string;
  year: number;
  concepts: string[];
  author_ids: number[];
  journal_id: number | null;
  doi: string | null;
  retracted: boolean;
}

/** Journals 1 and 2 keep their ids and titles from the hand-written fixture. */
const JOURNALS: { id: number; title: string; publisher_name: string | null; topics: Topic[] }[] = [
  { id: 1, title: 'Journal of Clinical Oncology Research', publisher_name: 'Demo Press', topics: ['oncology'] },
  { id: 2, title: 'Cardiology Letters', publisher_name: 'Demo Press', topics: ['cardiology'] },
  { id: 3, title: 'Neurology and Brain Disorders', publisher_name: 'Meridian Scientific', topics: ['neurology'] },
  { id: 4, title: 'Frontiers of Immunology Reports', publisher_name: 'Open Harbor', topics: ['immunology'] },
  { id: 5, title: 'Human Genetics Quarterly', publisher_name: 'Meridian Scientific', topics: ['genetics'] },
  { id: 6, title: 'International Journal of Epidemiology Methods', publisher_name: null, topics: ['epidemiology', 'statistics'] },
  { id: 7, title: 'Machine Learning in Medicine', publisher_name: 'Open Harbor', topics: ['machine learning'] },
  { id: 8, title: 'Annals of Applied Statistics in Health', publisher_name: 'Demo Press', topics: ['statistics'] },
  { id: 9, title: 'Cardio-Oncology Today', publisher_name: 'Demo Press', topics: ['cardiology', 'oncology'] },
  { id: 10, title: 'Neuroimmunology Letters', publisher_name: null, topics: ['neurology', 'immunology'] },
  { id: 11, title: 'Computational Genomics', publisher_name: 'Open Harbor', topics: ['genetics', 'machine learning'] },
  { id: 12, title: 'Public Health Evidence', publisher_name: 'Meridian Scientific', topics: ['epidemiology'] },
];

const articles: GenArticle[] = [];
const TITLE_FORMS = [
  (s: string, c: string) => `${s} in ${c}`,
  (s: string, c: string) => `${s} in ${c}: a multicentre study`,
  (s: string, c: string) => `${s} for patients with ${c}`,
  (s: string, c: string) => `Revisiting ${s.toLowerCase()} in ${c}`,
];
const usedTitles = new Set<string>();
for (let i = 0; i < 200; i++) {
  const id = 2001 + i;
  const lead = authors[i % authors.length] as GenAuthor;
  const topic = lead.topics[i % 3 === 2 && lead.topics.length > 1 ? 1 : 0] as Topic;
  const vocab = TOPICS[topic];
  let title = '';
  for (let attempt = 0; attempt < 20 && (title === '' || usedTitles.has(title)); attempt++) {
    title = pick(TITLE_FORMS)(pick(vocab.subjects), pick(vocab.settings));
  }
  usedTitles.add(title);
  const concepts = [topic, ...sample(vocab.concepts.filter((c) => c !== topic), int(2, 3))];
  const peers = authors.filter((a) => a.id !== lead.id && a.topics.includes(topic));
  const coauthors = sample(peers, int(0, 3)).map((a) => a.id);
  const journals = JOURNALS.filter((j) => j.topics.includes(topic));
  const year = int(1998, 2025);
  articles.push({
    id,
    title,
    abstract:
      `We study ${concepts.slice(1).join(', ')} in ${pick(vocab.settings)}. ` +
      `${pick(vocab.subjects)} was assessed with attention to ${pick(vocab.concepts)}; ` +
      `results inform ${topic} practice.`,
    year,
    concepts,
    author_ids: [lead.id, ...coauthors],
    journal_id: random() < 0.85 ? pick(journals).id : null,
    doi: `10.5555/demo.${id}`,
    // A handful of retractions (spec v6 `retracted_articles`).
    retracted: i % 29 === 13,
  });
}

// Metrics consistent with the articles: h-index bounded by article count, citations spread.
for (const author of authors) {
  const count = articles.filter((a) => a.author_ids.includes(author.id)).length;
  author.h_index = Math.min(count, int(Math.max(1, count - 3), count + 25));
  author.citations = author.h_index * int(20, 80) + int(0, 300);
}

/** Pre-existing authors groups of the demo org, referenced by the folders' Referee Finder settings. */
const byId = new Map(authors.map((a) => [a.id, a]));
const COI_FIELD = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
const COI_NO = '8d4b3c9f-0004-4d00-8000-000000000002';
function record(author: GenAuthor, coi: string | null): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: `${author.first_name} ${author.last_name}`,
    emails: author.emails.length > 0 ? [...author.emails] : null,
    orcids: author.orcid ? [author.orcid] : null,
    affiliations: author.affiliations.slice(0, 1),
  };
  if (coi) out[COI_FIELD] = coi;
  return out;
}
const groupMembers = (topic: Topic, n: number) => authors.filter((a) => a.topics[0] === topic).slice(0, n);
const groups = [
  {
    id: 501,
    name: 'Oncology board',
    label: 'board',
    owner_team: 'Editorial Office',
    editor_teams: ['Reviewers Desk'],
    viewer_teams: [],
    records: Object.fromEntries(
      groupMembers('oncology', 4).map((a, k) => [`onc-${a.id}`, record(a, k === 1 ? COI_YES : COI_NO)]),
    ),
  },
  {
    id: 502,
    name: 'Cardiology reviewers',
    label: null,
    owner_team: 'Reviewers Desk',
    editor_teams: [],
    viewer_teams: ['Board Secretariat'],
    records: Object.fromEntries(
      [...groupMembers('cardiology', 4), ...groupMembers('statistics', 1)].map((a, k) => [
        `card-${a.id}`,
        record(a, k === 2 ? COI_YES : null),
      ]),
    ),
  },
  {
    id: 503,
    name: 'Methods panel',
    label: 'stats',
    owner_team: 'Editorial Office',
    editor_teams: [],
    viewer_teams: [],
    records: Object.fromEntries(
      [...groupMembers('statistics', 3), ...groupMembers('machine learning', 3)].map((a) => [`meth-${a.id}`, record(a, null)]),
    ),
  },
];
void byId;

const folders = [
  { name: 'JCARD', journal_id: 2, referee_finder: { authors_groups: [502], effect: 'highlight' } },
  { name: 'ONCO-PANEL', journal_id: 1, referee_finder: { authors_groups: [501], effect: 'limit_to' } },
  { name: 'METHODS', journal_id: 8, referee_finder: { authors_groups: [503], effect: 'boost', boost_multiplier: 2 } },
  { name: 'NEURO', journal_id: 3 },
];

// ---- write -------------------------------------------------------------------------------------
// Only when run as a script: importing this module never touches the committed fixture.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const doc = parseDocument(readFileSync(DEFAULT_FIXTURE_PATH, 'utf8'));
  const keepAuthor = (doc.toJS() as { authors: unknown[] }).authors.filter((a) => (a as { id: number }).id === 101);
  const keepArticle = (doc.toJS() as { articles: unknown[] }).articles.filter((a) => (a as { id: number }).id === 1001);
  doc.setIn(['orgs', 0, 'folders'], doc.createNode(folders, { flow: false }));
  doc.setIn(['orgs', 0, 'groups'], doc.createNode(groups));
  doc.setIn(['orgs', 0, 'journal_ids'], doc.createNode([1, 2, 9], { flow: true }));
  doc.set(
    'authors',
    doc.createNode([...keepAuthor, ...authors.map(({ topics: _topics, ...rest }) => rest)]),
  );
  doc.set('articles', doc.createNode([...keepArticle, ...articles]));
  doc.set('journals', doc.createNode(JOURNALS.map(({ topics: _topics, ...rest }) => rest)));
  // Short lists of scalars (ids, concepts, emails) read better inline.
  visit(doc, {
    Seq(_key, node) {
      if (isSeq(node) && node.items.every((item) => isScalar(item))) node.flow = true;
    },
  });
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  parseFixture(text, 'generated fixture'); // refuse to write an invalid fixture
  writeFileSync(DEFAULT_FIXTURE_PATH, text);
  process.stdout.write(
    `wrote ${DEFAULT_FIXTURE_PATH}: ${authors.length + keepAuthor.length} authors, ${articles.length + keepArticle.length} articles, ${JOURNALS.length} journals\n`,
  );
}
