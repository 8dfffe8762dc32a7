/**
 * A CodeMirror 6 editor as a controlled input: `value` in, `onValue` out. HTML gets syntax
 * highlighting; both get Handlebars expressions marked, with wrapped lines. The editable content carries the label
 * (aria-labelledby), and Tab is left to move focus (CodeMirror's default without
 * indentWithTab), so the editor never traps keyboard users. CodeMirror's styles go in through
 * adoptedStyleSheets, which the UI's CSP allows.
 */
import { html } from '@codemirror/lang-html';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState } from '@codemirror/state';
import { Decoration, EditorView, MatchDecorator, ViewPlugin, type DecorationSet, type ViewUpdate } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'preact/hooks';

/**
 * Colours with at least 4.5:1 contrast on white and on the active line's tint (CodeMirror's
 * default style has a green at 4.26:1, which axe reports). It replaces the default, which
 * basicSetup installs only as a fallback.
 */
const READABLE = HighlightStyle.define([
  { tag: [tags.tagName, tags.heading], color: '#116329' },
  { tag: tags.attributeName, color: '#6639ba' },
  { tag: [tags.attributeValue, tags.string], color: '#0a3069' },
  { tag: [tags.comment, tags.angleBracket, tags.processingInstruction, tags.documentMeta], color: '#505a66' },
  { tag: [tags.keyword, tags.bool, tags.atom], color: '#a40e26' },
  { tag: [tags.number, tags.unit], color: '#7a3e00' },
  { tag: [tags.propertyName, tags.variableName, tags.definition(tags.variableName)], color: '#0a3069' },
  { tag: tags.invalid, color: '#a40e26', textDecoration: 'underline' },
]);

/**
 * Handlebars expressions (`{{name}}`, `{{{raw}}}`, `{{#if x}}`, `{{/if}}`, `{{! note }}`) marked
 * with the `cm-mustache` class (styled in template-editor.css) in both editors: they are what an
 * operator looks for in a template, and the HTML grammar does not know them. Matched within a
 * line, as MatchDecorator does; the triple form first, so `{{{x}}}` is one mark.
 */
const MUSTACHE = new MatchDecorator({
  regexp: /\{\{\{[\s\S]*?\}\}\}|\{\{[\s\S]*?\}\}/g,
  decoration: Decoration.mark({ class: 'cm-mustache' }),
});
const mustaches = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = MUSTACHE.createDeco(view);
    }
    update(update: ViewUpdate) {
      this.decorations = MUSTACHE.updateDeco(update, this.decorations);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

export interface CodeEditorProps {
  /** The id of the element that labels the editor (a visible <label> or heading). */
  labelledBy: string;
  /** The id of an element describing it (an error under it), if any. */
  describedBy?: string | undefined;
  language: 'html' | 'text';
  value: string;
  onValue: (value: string) => void;
  invalid?: boolean;
}

/** The editable content's label, description and validity, as CodeMirror attributes. */
function contentAttributes(labelledBy: string, describedBy: string | undefined, invalid: boolean | undefined) {
  const out: Record<string, string> = { 'aria-labelledby': labelledBy, 'aria-multiline': 'true' };
  if (describedBy !== undefined) out['aria-describedby'] = describedBy;
  if (invalid === true) out['aria-invalid'] = 'true';
  return EditorView.contentAttributes.of(out);
}

export function CodeEditor(props: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onValue = useRef(props.onValue);
  onValue.current = props.onValue;
  const labels = useRef(new Compartment());
  // What the editor reported through onValue since the page last handed its own document back.
  // A render can still carry one of these after newer keystrokes (fast typing, a held key): it
  // is an echo, not a change from outside, and writing it back would undo those keystrokes and
  // make the page and the editor overwrite each other forever (a frozen page, found by the
  // keyboard E2E test typing at full speed).
  const echoes = useRef<string[]>([]);

  // Built once per language: later values and labels arrive through the effects below (a new
  // editor for each would lose the cursor, the selection and the undo history).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the value and labels are only the new editor's first ones.
  useEffect(() => {
    if (host.current === null) return undefined;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          basicSetup,
          syntaxHighlighting(READABLE),
          props.language === 'html' ? html() : [],
          mustaches,
          EditorView.lineWrapping,
          labels.current.of(contentAttributes(props.labelledBy, props.describedBy, props.invalid)),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            const doc = update.state.doc.toString();
            echoes.current.push(doc);
            onValue.current(doc);
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
  }, [props.language]);

  useEffect(() => {
    const attributes = contentAttributes(props.labelledBy, props.describedBy, props.invalid);
    view.current?.dispatch({ effects: labels.current.reconfigure(attributes) });
  }, [props.labelledBy, props.describedBy, props.invalid]);

  // A value changed from outside (a reload, a restored version) replaces the document; an echo
  // of the editor's own older content does not.
  useEffect(() => {
    const editor = view.current;
    if (editor === null) return;
    const current = editor.state.doc.toString();
    const echo = echoes.current.indexOf(props.value);
    if (current === props.value) {
      echoes.current = [];
    } else if (echo >= 0) {
      echoes.current = echoes.current.slice(echo + 1);
    } else {
      echoes.current = [];
      editor.dispatch({ changes: { from: 0, to: current.length, insert: props.value } });
    }
  }, [props.value]);

  return <div class={`code-editor${props.invalid === true ? ' has-error' : ''}`} ref={host} />;
}
