/** The Settings & API page's own API call: the endpoints scripts can call (`GET /api/endpoints`), the listing the rules read. */
import { useQuery } from '@tanstack/react-query';
import { endpointListingQuery } from '../../api/rules.ts';

export function useEndpointList() {
  return useQuery(endpointListingQuery);
}
