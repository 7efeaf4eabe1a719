'use strict';

/**
 * Corruption: a damaged envelope, packed stream, field stream or dictionary record (the .NET engine's
 * InvalidDataException). Never returned as data.
 */
class InvalidDataError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'InvalidDataError';
    this.code = 'ERR_INVALID_DATA';
  }
}

/** The dictionary an envelope names cannot be had (the .NET engine's DictionaryNotFoundException). */
class DictionaryNotFoundError extends Error {
  constructor(dictionaryId, reason, options) {
    super(`Dictionary ${dictionaryId} was not found: ${reason}.`, options);
    this.name = 'DictionaryNotFoundError';
    this.code = 'ERR_DICTIONARY_NOT_FOUND';
    this.dictionaryId = dictionaryId;
  }
}

function corrupt(message) {
  throw new InvalidDataError(message);
}

module.exports = { InvalidDataError, DictionaryNotFoundError, corrupt };
