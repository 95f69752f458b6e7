/**
 * Broker-side assignors (KIP-848 consumer groups, KIP-1071 streams groups) that ask the kassign
 * service and fall back to the broker's own assignor when it cannot answer in time.
 */
package io.kassign.broker;
