"""The government protocols: SOAP envelopes, distribution requests and replies, events and their
signatures, the ADN and Sefin clients, XSD validation against the official schemas."""
