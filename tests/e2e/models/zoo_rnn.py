"""An LSTM and a GRU over a sequence, written as recurrent-net tutorials write
them: a dict of weight matrices, each gate the product of ``np.hstack`` of the
input, the state and a column of ones with one matrix, a loop over the time
steps of the input array, and a softmax cross-entropy of the predictions."""

import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def log_softmax(x):
    shifted = x - np.max(x, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def lstm_predict(params, inputs):
    def update(x, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], x, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], x, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], x, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], x, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)
    outputs = []
    for x in inputs:  # one time step of every sequence
        hiddens, cells = update(x, hiddens, cells)
        outputs.append(log_softmax(concat_and_multiply(params["predict"], hiddens)))
    return outputs


def lstm_log_likelihood(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    total = 0.0
    for t in range(len(logprobs)):
        total += np.sum(logprobs[t] * targets[t])
    return -total / (inputs.shape[0] * inputs.shape[1])


def gru_step(params, x, h):
    xh = np.hstack([x, h])
    z = sigmoid(np.dot(xh, params["Wz"]) + params["bz"])
    r = sigmoid(np.dot(xh, params["Wr"]) + params["br"])
    candidate = np.tanh(np.dot(np.hstack([x, r * h]), params["Wh"]) + params["bh"])
    return (1 - z) * h + z * candidate


def gru_loss(params, inputs, targets):
    h = np.zeros((inputs.shape[1], params["Wz"].shape[1]))
    loss = 0.0
    for t in range(inputs.shape[0]):
        h = gru_step(params, inputs[t], h)
        logits = np.dot(h, params["Wo"]) + params["bo"]
        loss = loss - np.sum(log_softmax(logits) * targets[t])
    return loss / inputs.shape[0]
