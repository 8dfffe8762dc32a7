import { readableAddress } from '../lib/idn';

/**
 * A stored address or list value as an operator reads it: an IDN domain decoded (`zoë@exämple.com`),
 * the stored A-label form (`zoë@xn--exmple-cua.com`, what the API answers and takes) on hover.
 */
export function AddressText(props: { value: string }) {
  const shown = readableAddress(props.value);
  return shown === props.value ? props.value : <span title={props.value}>{shown}</span>;
}
