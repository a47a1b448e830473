import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  DEFAULT_SETTINGS,
  IAriSettings,
  ISettingsValues,
  readSettings,
  translatedSchema,
  wizardLanguageOf,
  Words
} from '../src/settings_values';
import { marked } from './helpers';

/** Settings whose composite value of each key is the one in `values` (absent: undefined). */
function settings(values: Record<string, unknown>): ISettingsValues {
  return { get: (key: string) => ({ composite: values[key] }) };
}

describe('readSettings: the settings, with the defaults for what is not set', () => {
  const cases: [string, ISettingsValues | null, IAriSettings][] = [
    ['no registry', null, { statusBar: true, refreshInterval: 30, wizardLanguage: '' }],
    ['nothing set', settings({}), { statusBar: true, refreshInterval: 30, wizardLanguage: '' }],
    [
      'everything set',
      settings({ statusBar: false, refreshInterval: 60, wizardLanguage: 'ja' }),
      { statusBar: false, refreshInterval: 60, wizardLanguage: 'ja' }
    ],
    ['null is not set', settings({ statusBar: null, refreshInterval: null }), { statusBar: true, refreshInterval: 30, wizardLanguage: '' }],
    ['false and 0 are set', settings({ statusBar: false, refreshInterval: 0 }), { statusBar: false, refreshInterval: 0, wizardLanguage: '' }],
    ['one set', settings({ wizardLanguage: 'zh' }), { statusBar: true, refreshInterval: 30, wizardLanguage: 'zh' }]
  ];
  for (const [what, given, expected] of cases) {
    test(`${what}: ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(readSettings(given), expected);
    });
  }

  test('the defaults are a copy: changing them changes no later answer', () => {
    const first = readSettings(null);
    first.refreshInterval = 1;
    assert.equal(readSettings(null).refreshInterval, 30);
    assert.equal(DEFAULT_SETTINGS.refreshInterval, 30);
  });
});

describe("wizardLanguageOf: the setting when chosen, else JupyterLab's language", () => {
  const cases: [string, string, string][] = [
    ['ja', '', 'ja'],
    ['zh', 'ja-JP', 'zh'],
    ['en', 'zh_CN', 'en'],
    ['', 'ja-JP', 'ja'],
    ['', 'zh_CN', 'zh'],
    ['', 'ZH-cn', 'zh'],
    ['', 'en-US', 'en'],
    ['', 'en', 'en'],
    ['', 'fr-FR', ''],
    ['', '', ''],
    ['fr', 'ja', 'ja'], // a language the wizard does not speak: JupyterLab's
    ['JA', '', ''], // the setting is one of the schema's own words
    ['ja-JP', '', '']
  ];
  for (const [setting, code, expected] of cases) {
    test(`wizardLanguageOf('${setting}', '${code}') = '${expected}'`, () => {
      assert.equal(wizardLanguageOf(setting, code), expected);
    });
  }
});

describe("translatedSchema: the words a person reads, in the user's language", () => {
  const schema: Words = {
    title: 'ARI multi-node setup',
    description: 'Settings of the ARI extension',
    'jupyter.lab.setting-icon-label': 'ARI',
    'jupyter.lab.transform': true,
    type: 'object',
    properties: {
      refreshInterval: { title: 'Refresh interval', description: 'Seconds between polls', type: 'number', default: 30 },
      wizardLanguage: {
        title: 'Wizard language',
        type: 'string',
        default: '',
        oneOf: [
          { const: '', title: 'Follow JupyterLab (Settings > Language)' },
          { const: 'ja', title: '日本語' }
        ]
      }
    }
  };
  const expected: Words = {
    title: '⟨ARI multi-node setup⟩',
    description: '⟨Settings of the ARI extension⟩',
    'jupyter.lab.setting-icon-label': '⟨ARI⟩',
    'jupyter.lab.transform': true,
    type: 'object',
    properties: {
      refreshInterval: { title: '⟨Refresh interval⟩', description: '⟨Seconds between polls⟩', type: 'number', default: 30 },
      wizardLanguage: {
        title: '⟨Wizard language⟩',
        type: 'string',
        default: '',
        oneOf: [
          { const: '', title: '⟨Follow JupyterLab (Settings > Language)⟩' },
          { const: 'ja', title: '⟨日本語⟩' }
        ]
      }
    }
  };
  const original = JSON.stringify(schema);
  const cases: [string, Words, Words][] = [
    ['titles, descriptions and choices; keys, types and defaults as they were', schema, expected],
    ['a schema without properties gets none', { title: 'T', type: 'object' }, { title: '⟨T⟩', type: 'object', properties: {} }],
    ['a title that is no string stays', { title: 7, properties: {} }, { title: 7, properties: {} }]
  ];
  for (const [what, given, want] of cases) {
    test(`${what}: ${JSON.stringify(want).slice(0, 60)}…`, () => {
      assert.deepEqual(translatedSchema(given, marked), want);
    });
  }

  test('the schema given is left as it was', () => {
    translatedSchema(schema, marked);
    assert.equal(JSON.stringify(schema), original);
  });
});
